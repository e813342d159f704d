/* backlog.c - requests waiting for room in nng's send buffer (see backlog.h). */
#include "backlog.h"

#include <stdlib.h>

#include "../common/err.h"

struct backlog_item {
	struct backlog_item *next;
	nng_msg *msg;
	bool control;
	bool first; /* backlog_open()'s: nothing may go without it */
};

void backlog_init(struct backlog *b, backlog_try_fn try_send, void *arg)
{
	*b = (struct backlog){ .try_send = try_send, .arg = arg };
	pthread_mutex_init(&b->lock, NULL);
}

static size_t backlog_drop_locked(struct backlog *b)
{
	size_t n = b->count;

	while (b->head) {
		struct backlog_item *it = b->head;

		b->head = it->next;
		nng_msg_free(it->msg);
		free(it);
	}
	b->tail = NULL;
	b->count = b->requests = 0;
	return n;
}

void backlog_destroy(struct backlog *b)
{
	backlog_drop_locked(b);
	pthread_mutex_destroy(&b->lock);
}

/* Sends from the head while nng takes them.  A message nng refuses for
 * good is dropped (its request times out like one lost with stored). */
static void backlog_pump_locked(struct backlog *b)
{
	while (b->head) {
		struct backlog_item *it = b->head;
		int rc = b->try_send(b->arg, it->msg);

		if (rc == ERR_FULL)
			return;
		if (rc && it->first) {
			/* The HELLO cannot go: nothing after it may either. */
			b->open = false;
			backlog_drop_locked(b);
			return;
		}
		if (rc)
			nng_msg_free(it->msg);
		b->head = it->next;
		if (!b->head)
			b->tail = NULL;
		b->count--;
		b->requests -= !it->control;
		free(it);
	}
}

static int backlog_append_locked(struct backlog *b, nng_msg *msg, bool control, bool at_head)
{
	struct backlog_item *it = malloc(sizeof(*it));

	if (!it)
		return ERR_NOMEM;
	*it = (struct backlog_item){ NULL, msg, control, at_head };
	if (at_head) {
		it->next = b->head;
		b->head = it;
		if (!b->tail)
			b->tail = it;
	} else {
		if (b->tail)
			b->tail->next = it;
		else
			b->head = it;
		b->tail = it;
	}
	b->count++;
	b->requests += !control;
	return 0;
}

int backlog_send(struct backlog *b, nng_msg *msg, bool control, size_t max_requests,
		 bool *woke)
{
	int rc = 0;

	*woke = false;
	pthread_mutex_lock(&b->lock);
	if (!b->open) {
		rc = ERR_CLOSED;
	} else {
		backlog_pump_locked(b);
		if (!b->head && (rc = b->try_send(b->arg, msg)) != ERR_FULL) {
			/* sent, or refused for good */
		} else if (!control && b->requests >= max_requests) {
			rc = ERR_FULL;
		} else {
			rc = backlog_append_locked(b, msg, control, false);
			*woke = rc == 0 && b->count == 1;
		}
		if (rc == 0)
			msg = NULL;
	}
	pthread_mutex_unlock(&b->lock);
	if (msg)
		nng_msg_free(msg);
	return rc;
}

bool backlog_pump(struct backlog *b)
{
	bool more;

	pthread_mutex_lock(&b->lock);
	backlog_pump_locked(b);
	more = b->head != NULL;
	pthread_mutex_unlock(&b->lock);
	return more;
}

int backlog_open(struct backlog *b, nng_msg *first, bool *woke)
{
	int rc;

	*woke = false;
	pthread_mutex_lock(&b->lock);
	backlog_drop_locked(b); /* nothing of an older link goes before the HELLO */
	rc = b->try_send(b->arg, first);
	if (rc == ERR_FULL) {
		rc = backlog_append_locked(b, first, true, true);
		*woke = rc == 0;
		if (rc)
			nng_msg_free(first);
	} else if (rc) {
		nng_msg_free(first);
	}
	b->open = rc == 0;
	pthread_mutex_unlock(&b->lock);
	return rc;
}

size_t backlog_close(struct backlog *b)
{
	size_t n;

	pthread_mutex_lock(&b->lock);
	b->open = false;
	n = backlog_drop_locked(b);
	pthread_mutex_unlock(&b->lock);
	return n;
}

bool backlog_is_open(struct backlog *b)
{
	bool open;

	pthread_mutex_lock(&b->lock);
	open = b->open;
	pthread_mutex_unlock(&b->lock);
	return open;
}

size_t backlog_count(struct backlog *b)
{
	size_t n;

	pthread_mutex_lock(&b->lock);
	n = b->count;
	pthread_mutex_unlock(&b->lock);
	return n;
}
