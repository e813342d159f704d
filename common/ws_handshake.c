/* ws_handshake.c - websocket opening handshake, client side (see ws_handshake.h). */
#include "ws_handshake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "buf.h"
#include "err.h"

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

int ws_handshake_key(char key[WS_KEY_LEN + 1])
{
	unsigned char raw[16];

	if (RAND_bytes(raw, sizeof(raw)) != 1)
		return ERR_IO;
	EVP_EncodeBlock((unsigned char *)key, raw, sizeof(raw));
	return 0;
}

void ws_handshake_accept(const char *key, char accept[29])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char text[WS_KEY_LEN + sizeof(ws_guid)];
	size_t klen = strnlen(key, WS_KEY_LEN);

	memcpy(text, key, klen);
	memcpy(text + klen, ws_guid, sizeof(ws_guid) - 1);
	EVP_Digest(text, klen + sizeof(ws_guid) - 1, md, &mdlen, EVP_sha1(), NULL);
	EVP_EncodeBlock((unsigned char *)accept, md, (int)mdlen);
}

int ws_handshake_request(struct buf *out, const char *host, uint16_t port, const char *path,
			 const char *key, bool deflate)
{
	char text[512];
	int n = snprintf(text, sizeof(text),
			 "GET %s HTTP/1.1\r\n"
			 "Host: %s:%u\r\n"
			 "Upgrade: websocket\r\n"
			 "Connection: Upgrade\r\n"
			 "Sec-WebSocket-Key: %s\r\n"
			 "Sec-WebSocket-Version: 13\r\n"
			 "%s"
			 "\r\n",
			 path, host, (unsigned)port, key,
			 deflate ? "Sec-WebSocket-Extensions: permessage-deflate; "
				   "client_no_context_takeover; client_max_window_bits\r\n" : "");

	if (n < 0 || (size_t)n >= sizeof(text))
		return ERR_INVAL;
	return buf_append(out, text, (size_t)n);
}

size_t ws_handshake_head_len(const char *data, size_t len)
{
	for (size_t i = 3; i < len; i++)
		if (data[i] == '\n' && data[i - 1] == '\r' && data[i - 2] == '\n' &&
		    data[i - 3] == '\r')
			return i + 1;
	return 0;
}

/* True when value (vlen bytes) contains word, ignoring case. */
static int ws_has_word(const char *value, size_t vlen, const char *word)
{
	size_t wlen = strlen(word);

	for (size_t i = 0; i + wlen <= vlen; i++)
		if (!strncasecmp(value + i, word, wlen))
			return 1;
	return 0;
}

struct ws_head_seen {
	int upgrade, connection, accept, worker, deflate;
};

/* Looks at one header line "Name: value" (len bytes, no CRLF). */
static void ws_header(const char *line, size_t len, const char *want_accept,
		      struct ws_head_seen *seen)
{
	const char *colon = memchr(line, ':', len);
	size_t nlen, vlen;
	const char *v;

	if (!colon)
		return;
	nlen = (size_t)(colon - line);
	v = colon + 1;
	while (v < line + len && (*v == ' ' || *v == '\t'))
		v++;
	vlen = (size_t)(line + len - v);
	while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
		vlen--;
	if (nlen == 7 && !strncasecmp(line, "Upgrade", 7))
		seen->upgrade = ws_has_word(v, vlen, "websocket");
	else if (nlen == 10 && !strncasecmp(line, "Connection", 10))
		seen->connection = ws_has_word(v, vlen, "upgrade");
	else if (nlen == 20 && !strncasecmp(line, "Sec-WebSocket-Accept", 20))
		seen->accept = vlen == 28 && !memcmp(v, want_accept, 28);
	else if (nlen == 24 && !strncasecmp(line, "Sec-WebSocket-Extensions", 24))
		seen->deflate = ws_has_word(v, vlen, "permessage-deflate");
	else if (nlen == 14 && !strncasecmp(line, "X-Relay-Worker", 14))
		seen->worker = atoi(v);
}

int ws_handshake_check(const char *head, size_t len, const char *key, int *worker, int *deflate)
{
	struct ws_head_seen seen = { 0, 0, 0, -1, 0 };
	char accept[29];
	const char *p = head, *end = head + len;

	if (len < 12 || strncmp(head, "HTTP/1.1 101", 12))
		return ERR_INVAL;
	ws_handshake_accept(key, accept);
	p = memchr(p, '\n', len);
	while (p && ++p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		size_t l = eol ? (size_t)(eol - p) : (size_t)(end - p);

		if (l && p[l - 1] == '\r')
			l--;
		ws_header(p, l, accept, &seen);
		p = eol;
	}
	*worker = seen.worker;
	*deflate = seen.deflate;
	return seen.upgrade && seen.connection && seen.accept ? 0 : ERR_INVAL;
}
