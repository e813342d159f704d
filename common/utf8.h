/*
 * utf8.h - counting characters as Nostr's limits count them, and cutting
 * text between characters.
 *
 * NIP-01 limits a subscription id to 64 characters and NIP-11's
 * max_content_length counts characters of an event's content; a character
 * is one UTF-8 code point, 1 to 4 bytes.
 */
#ifndef COMMON_UTF8_H
#define COMMON_UTF8_H

#include <stddef.h>

/* Code points in the len bytes at s: the bytes that do not continue a
 * sequence (whose top two bits are 10).  It does not validate: the text is
 * UTF-8 already, since a websocket text frame is checked and the JSON
 * reader writes escapes as UTF-8. */
size_t utf8_chars(const char *s, size_t len);

/* The length of the longest prefix of the len bytes at s that is at most
 * max bytes and ends between two characters, so cutting text there never
 * leaves part of a character (nor half of a decoded U+0000, json.h). */
size_t utf8_prefix(const char *s, size_t len, size_t max);

#endif
