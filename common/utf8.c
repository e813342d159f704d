/*
 * utf8.c - counting characters as Nostr's limits count them, and cutting
 * text between characters (see utf8.h).
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

size_t utf8_prefix(const char *s, size_t len, size_t max)
{
	size_t n = len < max ? len : max;

	while (n > 0 && n < len && ((unsigned char)s[n] & 0xC0) == 0x80)
		n--;
	return n;
}
