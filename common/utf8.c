/*
 * utf8.c - counting characters as Nostr's limits count them.
 */
#include "utf8.h"

size_t utf8_chars(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			n++;
	return n;
}
