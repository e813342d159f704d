/* mailbox.c - MPSC list to the service thread (see mailbox.h). */
#include "mailbox.h"

#include <libwebsockets.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct mailbox {
	pthread_mutex_t lock;
	struct mail *head, *tail;
	struct lws_context *lws;
};

struct mailbox *mailbox_new(struct lws_context *lws)
{
	struct mailbox *mb = calloc(1, sizeof(*mb));

	if (!mb)
		return NULL;
	pthread_mutex_init(&mb->lock, NULL);
	mb->lws = lws;
	return mb;
}

void mail_free(struct mail *m)
{
	if (!m)
		return;
	free(m->text);
	filters_free(m->filters, m->nfilters);
	if (m->msg)
		nng_msg_free(m->msg);
	free(m);
}

void mailbox_free(struct mailbox *mb)
{
	struct mail *m, *next;

	if (!mb)
		return;
	for (m = mb->head; m; m = next) {
		next = m->next;
		mail_free(m);
	}
	pthread_mutex_destroy(&mb->lock);
	free(mb);
}

struct mail *mail_new(enum mail_kind kind, uint64_t conn_id)
{
	struct mail *m = calloc(1, sizeof(*m));

	if (m) {
		m->kind = kind;
		m->conn_id = conn_id;
	}
	return m;
}

void mail_list_append(struct mail_list *list, struct mail *m)
{
	if (!m)
		return;
	m->next = NULL;
	if (list->tail)
		list->tail->next = m;
	else
		list->head = m;
	list->tail = m;
}

void mailbox_post_list(struct mailbox *mb, struct mail_list *list)
{
	struct mail *head = list->head, *tail = list->tail;
	int was_empty;

	if (!head)
		return;
	*list = (struct mail_list){ NULL, NULL };
	tail->next = NULL;
	pthread_mutex_lock(&mb->lock);
	was_empty = mb->head == NULL;
	if (mb->tail)
		mb->tail->next = head;
	else
		mb->head = head;
	mb->tail = tail;
	pthread_mutex_unlock(&mb->lock);
	/* One wake-up per batch: the service thread drains everything it finds. */
	if (was_empty)
		lws_cancel_service(mb->lws);
}

void mailbox_post(struct mailbox *mb, struct mail *m)
{
	struct mail_list one = { m, m };

	mailbox_post_list(mb, &one);
}

struct mail *mailbox_drain(struct mailbox *mb)
{
	struct mail *list;

	pthread_mutex_lock(&mb->lock);
	list = mb->head;
	mb->head = mb->tail = NULL;
	pthread_mutex_unlock(&mb->lock);
	return list;
}

struct mail *mail_new_event(enum mail_kind kind, uint64_t conn_id, uint32_t request_id,
			    const uint8_t event_id[EVENT_ID_LEN])
{
	struct mail *m = mail_new(kind, conn_id);

	if (m) {
		m->request_id = request_id;
		memcpy(m->event_id, event_id, EVENT_ID_LEN);
	}
	return m;
}
