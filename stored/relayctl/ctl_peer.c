/*
 * ctl_peer.c - one websocket connection to another relay, used as a
 * blocking client by relayctl sync (see ctl.h).
 *
 * The loop of common/ws_client.h is callback driven; this wraps it so the
 * sync reads as a sequence of sends and waits.  Received messages wait in a
 * small queue until ctl_peer_next() takes them.  It counts the bytes each
 * way for the summary.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../common/json.h"
#include "../../common/ws_client.h"
#include "ctl.h"

/* The largest message a relay may send us (an EVENT frame). */
#define CTL_PEER_MAX_MESSAGE (16u << 20)

struct ctl_peer_msg {
	char *text;
	size_t len;
	struct ctl_peer_msg *next;
};

struct ctl_peer {
	struct ws_loop *loop;
	struct ws_conn *conn;
	bool open, gone;
	int err;
	struct ctl_peer_msg *head, *tail;
	uint64_t bytes_in, bytes_out;
};

static void ctl_peer_on_open(struct ws_conn *c, void *ud)
{
	(void)c;
	((struct ctl_peer *)ud)->open = true;
}

static void ctl_peer_on_message(struct ws_conn *c, const char *data, size_t len, void *ud)
{
	struct ctl_peer *p = ud;
	struct ctl_peer_msg *m = calloc(1, sizeof(*m));

	(void)c;
	p->bytes_in += len;
	if (!m || !(m->text = malloc(len + 1))) {
		free(m);
		return; /* the wait for it times out and says so */
	}
	memcpy(m->text, data, len);
	m->text[len] = '\0';
	m->len = len;
	if (p->tail)
		p->tail->next = m;
	else
		p->head = m;
	p->tail = m;
}

static void ctl_peer_on_close(struct ws_conn *c, int err, void *ud)
{
	struct ctl_peer *p = ud;

	(void)c;
	p->gone = true;
	p->open = false;
	p->err = err;
	p->conn = NULL;
}

static const struct ws_handlers ctl_peer_handlers = {
	ctl_peer_on_open, ctl_peer_on_message, ctl_peer_on_close,
};

static int64_t ctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct ctl_peer *ctl_peer_open(const char *url, int timeout_ms)
{
	struct ctl_peer *p = calloc(1, sizeof(*p));
	struct ws_url u;
	int64_t until = ctl_now_ms() + timeout_ms;

	if (!p)
		return NULL;
	if (ws_url_parse(url, &u)) {
		fprintf(stderr, "relayctl: %s is not a ws://127.x.x.x:PORT URL (the only kind this"
				" build can reach)\n", url);
		free(p);
		return NULL;
	}
	p->loop = ws_loop_new(CTL_PEER_MAX_MESSAGE);
	p->conn = p->loop ? ws_connect(p->loop, &u, &ctl_peer_handlers, p) : NULL;
	while (p->conn && !p->open && !p->gone && ctl_now_ms() < until)
		ws_loop_poll(p->loop, 50000);
	if (!p->open) {
		fprintf(stderr, "relayctl: cannot open a websocket to %s\n", url);
		ctl_peer_close(p);
		return NULL;
	}
	return p;
}

void ctl_peer_close(struct ctl_peer *p)
{
	if (!p)
		return;
	while (p->head) {
		struct ctl_peer_msg *m = p->head;

		p->head = m->next;
		free(m->text);
		free(m);
	}
	ws_loop_free(p->loop);
	free(p);
}

int ctl_peer_send(struct ctl_peer *p, const char *text, size_t len)
{
	if (!p->open || ws_send_text(p->conn, text, len))
		return -1;
	p->bytes_out += len;
	return ws_flush(p->conn) == 0 && p->open ? 0 : -1;
}

int ctl_peer_send_json(struct ctl_peer *p, const cJSON *msg)
{
	char *text = json_print(msg, false);
	int rc = text ? ctl_peer_send(p, text, strlen(text)) : -1;

	free(text);
	return rc;
}

cJSON *ctl_peer_next(struct ctl_peer *p, int timeout_ms)
{
	int64_t until = ctl_now_ms() + timeout_ms;

	while (!p->head && !p->gone && ctl_now_ms() < until)
		ws_loop_poll(p->loop, 50000);
	while (p->head) {
		struct ctl_peer_msg *m = p->head;
		cJSON *msg = json_parse(m->text, m->len, true);

		p->head = m->next;
		if (!p->head)
			p->tail = NULL;
		free(m->text);
		free(m);
		if (cJSON_IsArray(msg))
			return msg;
		cJSON_Delete(msg); /* not a Nostr message: skipped */
	}
	return NULL;
}

bool ctl_peer_gone(const struct ctl_peer *p)
{
	return p->gone;
}

uint64_t ctl_peer_bytes_in(const struct ctl_peer *p)
{
	return p->bytes_in;
}

uint64_t ctl_peer_bytes_out(const struct ctl_peer *p)
{
	return p->bytes_out;
}
