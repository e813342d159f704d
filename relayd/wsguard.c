/* wsguard.c - following accepted connections for unmasked frames (see
 * wsguard.h). */
#include "wsguard.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "../common/log.h"

/* Descriptors above this are not followed (the table is one pointer each). */
#define WSGUARD_MAX_FDS (1 << 20)

void wsguard_stream_init(struct wsguard_stream *st)
{
	memset(st, 0, sizeof(*st));
	st->phase = WSGUARD_HEAD;
}

/* Where the value of header key (lowercase, with its colon) starts in a
 * lowercased line, past blanks; 0 when the line is another header. */
static size_t wsguard_header_value(const char *line, size_t len, const char *key)
{
	size_t i = strlen(key);

	if (len < i || memcmp(line, key, i) != 0)
		return 0;
	while (i < len && (line[i] == ' ' || line[i] == '\t'))
		i++;
	return i;
}

/* One header line of a request head (lowercased). */
static void wsguard_head_line(struct wsguard_stream *st, const char *line, size_t len)
{
	size_t v;

	if ((v = wsguard_header_value(line, len, "upgrade:")))
		st->upgrade = len - v >= 9 && memcmp(line + v, "websocket", 9) == 0;
	else if (wsguard_header_value(line, len, "transfer-encoding:"))
		st->chunked = true; /* a body whose end only its chunks tell */
	else if ((v = wsguard_header_value(line, len, "content-length:")))
		for (st->content_length = 0;
		     v < len && line[v] >= '0' && line[v] <= '9' && st->content_length < UINT64_MAX / 10; v++)
			st->content_length = st->content_length * 10 + (uint64_t)(line[v] - '0');
}

/* A head ended: frames follow an upgrade; a plain request's body, then
 * the next request, follow any other (a chunked body is not followed). */
static void wsguard_head_done(struct wsguard_stream *st)
{
	if (st->upgrade) {
		st->phase = WSGUARD_FRAME;
	} else if (st->chunked) {
		st->phase = WSGUARD_OFF;
	} else {
		uint64_t body = st->content_length;

		wsguard_stream_init(st);
		st->payload_left = body;
		st->phase = body ? WSGUARD_BODY : WSGUARD_HEAD;
	}
}

/* One byte of a request head. */
static void wsguard_head_byte(struct wsguard_stream *st, uint8_t c)
{
	if (++st->head_bytes > WSGUARD_HEAD_MAX) {
		st->phase = WSGUARD_OFF;
	} else if (c == '\n') {
		/* An empty line ends the head, unless nothing came before it
		 * (HTTP lets a client send blank lines ahead of its request). */
		if (st->line_len == 0 && st->started)
			wsguard_head_done(st);
		else
			wsguard_head_line(st, st->line, st->line_len);
		if (st->line_len)
			st->started = true;
		st->line_len = 0;
	} else if (c != '\r' && st->line_len < sizeof(st->line)) {
		st->line[st->line_len++] = (char)tolower(c);
	}
}

/* Bytes of the frame header being collected, once its second byte is in. */
static unsigned wsguard_header_size(const struct wsguard_stream *st)
{
	unsigned len7 = st->hdr[1] & 0x7f;

	return 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + 4; /* + the mask key */
}

static uint64_t wsguard_payload_size(const struct wsguard_stream *st)
{
	unsigned len7 = st->hdr[1] & 0x7f, ext = len7 == 126 ? 2 : len7 == 127 ? 8 : 0;
	uint64_t n = ext ? 0 : len7;

	for (unsigned i = 0; i < ext; i++)
		n = n << 8 | st->hdr[2 + i];
	return n;
}

size_t wsguard_scan(struct wsguard_stream *st, const uint8_t *data, size_t len)
{
	size_t i = 0, frame_start = 0; /* 0: the frame began before this read */

	while (i < len) {
		switch (st->phase) {
		case WSGUARD_HEAD:
			wsguard_head_byte(st, data[i++]);
			break;
		case WSGUARD_FRAME:
			if (st->hdr_len == 0)
				frame_start = i;
			st->hdr[st->hdr_len++] = data[i++];
			if (st->hdr_len == 2 && !(st->hdr[1] & 0x80)) {
				st->phase = WSGUARD_BROKEN;
				return frame_start;
			}
			if (st->hdr_len >= 2 && st->hdr_len == wsguard_header_size(st)) {
				st->payload_left = wsguard_payload_size(st);
				st->hdr_len = 0;
				st->phase = st->payload_left ? WSGUARD_PAYLOAD : WSGUARD_FRAME;
			}
			break;
		case WSGUARD_PAYLOAD:
		case WSGUARD_BODY: {
			size_t skip = len - i < st->payload_left ? len - i : (size_t)st->payload_left;

			i += skip;
			st->payload_left -= skip;
			if (!st->payload_left)
				st->phase = st->phase == WSGUARD_BODY ? WSGUARD_HEAD : WSGUARD_FRAME;
			break;
		}
		case WSGUARD_OFF:
			return len;
		case WSGUARD_BROKEN:
			return 0;
		}
	}
	return len;
}

/* ---- the streams of open descriptors ---- */

static _Atomic(struct wsguard_stream *) *wsguard_slots;
static size_t wsguard_nslots;
static pthread_once_t wsguard_once = PTHREAD_ONCE_INIT;
static atomic_uint_fast64_t wsguard_refusals;

static void wsguard_table(void)
{
	struct rlimit rl;

	wsguard_nslots = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < WSGUARD_MAX_FDS
				 ? (size_t)rl.rlim_cur
				 : WSGUARD_MAX_FDS;
	wsguard_slots = calloc(wsguard_nslots, sizeof(*wsguard_slots));
	if (!wsguard_slots)
		wsguard_nslots = 0;
}

void wsguard_follow(int fd)
{
	struct wsguard_stream *st;

	pthread_once(&wsguard_once, wsguard_table);
	if (fd < 0 || (size_t)fd >= wsguard_nslots || !(st = malloc(sizeof(*st)))) {
		static atomic_bool logged;

		if (!atomic_exchange(&logged, true))
			log_warnx("a connection's frames are not checked for masking (descriptor %d)",
				  fd);
		return;
	}
	wsguard_stream_init(st);
	free(atomic_exchange(&wsguard_slots[fd], st)); /* a close not seen: start over */
}

void wsguard_forget(int fd)
{
	pthread_once(&wsguard_once, wsguard_table); /* the table's size, seen by this thread */
	if (fd >= 0 && (size_t)fd < wsguard_nslots && wsguard_slots)
		free(atomic_exchange(&wsguard_slots[fd], NULL));
}

size_t wsguard_filter(int fd, const void *buf, size_t n)
{
	struct wsguard_stream *st;
	size_t pass;

	pthread_once(&wsguard_once, wsguard_table);
	if (fd < 0 || (size_t)fd >= wsguard_nslots || !wsguard_slots ||
	    !(st = atomic_load(&wsguard_slots[fd])) || st->phase == WSGUARD_OFF)
		return n;
	if (st->phase == WSGUARD_BROKEN)
		return 0;
	pass = wsguard_scan(st, buf, n);
	if (st->phase == WSGUARD_BROKEN) {
		/* Readable at once, and every later read is the end of the
		 * stream: the library closes the connection. */
		shutdown(fd, SHUT_RD);
		if (atomic_fetch_add(&wsguard_refusals, 1) == 0)
			log_info("a client sent an unmasked frame; its connection is closed"
				 " (RFC 6455; later ones at debug)");
		else
			log_debug("a client sent an unmasked frame; its connection is closed");
	}
	return pass;
}

uint64_t wsguard_refused(void)
{
	return atomic_load(&wsguard_refusals);
}
