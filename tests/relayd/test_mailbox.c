/*
 * test_mailbox.c - checks relayd/mailbox.c: FIFO drain, mail_free of every
 * kind with its owned fields (text, filters, nng message; the sanitizer
 * build proves nothing leaks), mailbox_free with mail still queued, a list
 * posted at once (a lane's bundle of pending events) in its place, that
 * several posting threads keep each thread's order while a drainer runs,
 * and that a post from another thread wakes a running lws service loop
 * (LWS_CALLBACK_EVENT_WAIT_CANCELLED).
 *
 * A minimal libwebsockets context with no listening port stands in for the
 * worker's; its one protocol counts wake-ups and drains.
 */
#include <check.h>
#include <libwebsockets.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../relayd/mailbox.h"
#include "../support/suite.h"

static struct mailbox *wake_mb;	   /* what the protocol callback drains */
static volatile int wake_count;	   /* EVENT_WAIT_CANCELLED seen */
static volatile uint32_t wake_got; /* mails drained by the callback */

static int test_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			 size_t len)
{
	if (reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED && wake_mb) {
		struct mail *m = mailbox_drain(wake_mb), *next;

		wake_count++;
		for (; m; m = next) {
			next = m->next;
			wake_got++;
			mail_free(m);
		}
	}
	return 0;
}

static const struct lws_protocols protocols[] = {
	{ "mailbox-test", test_callback, 0, 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 },
};

static struct lws_context *ctx;

static void setup(void)
{
	struct lws_context_creation_info info;

	lws_set_log_level(0, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	ctx = lws_create_context(&info);
	ck_assert_ptr_nonnull(ctx);
}

static void teardown(void)
{
	lws_context_destroy(ctx);
}

START_TEST(test_fifo_drain)
{
	struct mailbox *mb = mailbox_new(ctx);
	struct mail *m, *next;
	uint32_t want = 0;

	ck_assert_ptr_nonnull(mb);
	ck_assert_ptr_null(mailbox_drain(mb));
	for (uint32_t i = 0; i < 100; i++) {
		m = mail_new((enum mail_kind)(i % (MAIL_LINK_DOWN + 1)), 1000 + i);
		ck_assert_ptr_nonnull(m);
		ck_assert_uint_eq(m->conn_id, 1000 + i);
		m->request_id = i;
		m->next = (struct mail *)m; /* post must not trust a stale link */
		mailbox_post(mb, m);
		if (i == 49) { /* drain half-way: the second batch starts afresh */
			for (m = mailbox_drain(mb); m; m = next) {
				next = m->next;
				ck_assert_uint_eq(m->request_id, want++);
				mail_free(m);
			}
			ck_assert_uint_eq(want, 50);
		}
	}
	for (m = mailbox_drain(mb); m; m = next) {
		next = m->next;
		ck_assert_uint_eq(m->request_id, want);
		ck_assert_int_eq(m->kind, (int)(want % (MAIL_LINK_DOWN + 1)));
		want++;
		mail_free(m);
	}
	ck_assert_uint_eq(want, 100);
	ck_assert_ptr_null(mailbox_drain(mb));
	mailbox_free(mb);
	mailbox_free(NULL);
}
END_TEST

static struct filter *make_filters(uint32_t n)
{
	struct filter *f = calloc(n, sizeof(*f));

	for (uint32_t i = 0; i < n; i++) {
		filter_init(&f[i]);
		f[i].has_authors = true;
		f[i].nauthors = 1;
		f[i].authors = calloc(1, 32);
		f[i].ntags = 1;
		f[i].tags = calloc(1, sizeof(*f[i].tags));
		f[i].tags[0].name = 't';
		f[i].tags[0].nvalues = 1;
		f[i].tags[0].values = calloc(1, sizeof(char *));
		f[i].tags[0].values[0] = strdup("nostr");
		f[i].tags[0].lens = calloc(1, sizeof(uint32_t));
		f[i].tags[0].lens[0] = 5;
	}
	return f;
}

/* A mail of kind with every field its kind owns filled in. */
static struct mail *full_mail(enum mail_kind kind)
{
	struct mail *m = mail_new(kind, 7);

	ck_assert_ptr_nonnull(m);
	switch (kind) {
	case MAIL_TEXT:
		m->text = strdup("[\"NOTICE\",\"hi\"]");
		m->text_len = strlen(m->text);
		break;
	case MAIL_SUB_OPEN:
		m->filters = make_filters(3);
		m->nfilters = 3;
		/* fall through */
	case MAIL_SUB_CLOSE:
		memcpy(m->sub_id, "sub", 4);
		m->sub_id_len = 3;
		break;
	case MAIL_RPC:
	case MAIL_DELIVER: ck_assert_int_eq(nng_msg_alloc(&m->msg, 64), 0); break;
	default: m->request_id = 9; break;
	}
	return m;
}

START_TEST(test_mail_free_every_kind)
{
	for (int k = MAIL_TEXT; k <= MAIL_LINK_DOWN; k++) {
		mail_free(full_mail((enum mail_kind)k));
		/* And the same kind with nothing owned. */
		mail_free(mail_new((enum mail_kind)k, 1));
	}
	mail_free(NULL);
}
END_TEST

/* Freeing a mailbox frees the mail nobody drained. */
START_TEST(test_free_with_queued_mail)
{
	struct mailbox *mb = mailbox_new(ctx);

	for (int round = 0; round < 3; round++)
		for (int k = MAIL_TEXT; k <= MAIL_LINK_DOWN; k++)
			mailbox_post(mb, full_mail((enum mail_kind)k));
	mailbox_free(mb);
}
END_TEST

/* A list posted at once lands whole after the mail posted before it, in
 * its own order, and ends at its tail whatever the tail's stale link said;
 * an empty list posts nothing. */
START_TEST(test_post_list)
{
	struct mailbox *mb = mailbox_new(ctx);
	struct mail_list list = { NULL, NULL };
	struct mail *m, *next;
	uint8_t id[EVENT_ID_LEN];
	uint32_t n = 0;

	mailbox_post_list(mb, &list);
	ck_assert_ptr_null(mailbox_drain(mb));
	mailbox_post(mb, mail_new(MAIL_LINK_UP, 0));
	for (uint32_t i = 0; i < 5; i++) {
		memset(id, (int)i + 1, sizeof(id));
		m = mail_new_event(MAIL_EVENT_PENDING, 100 + i, 7000 + i, id);
		ck_assert_ptr_nonnull(m);
		mail_list_append(&list, m);
	}
	mail_list_append(&list, NULL); /* a mail that could not be allocated */
	list.tail->next = list.head; /* stale: post must end the list at tail */
	mailbox_post_list(mb, &list);
	ck_assert_ptr_null(list.head); /* taken */
	ck_assert_ptr_null(list.tail);
	for (m = mailbox_drain(mb); m && n < 7; m = next, n++) {
		next = m->next;
		if (n == 0) {
			ck_assert_int_eq(m->kind, MAIL_LINK_UP);
		} else {
			ck_assert_int_eq(m->kind, MAIL_EVENT_PENDING);
			ck_assert_uint_eq(m->conn_id, 100 + n - 1);
			ck_assert_uint_eq(m->request_id, 7000 + n - 1);
			memset(id, (int)n, sizeof(id));
			ck_assert_mem_eq(m->event_id, id, EVENT_ID_LEN);
		}
		mail_free(m);
	}
	ck_assert_uint_eq(n, 6);
	mailbox_free(mb);
}
END_TEST

#define NPOSTERS 4
#define PER_POSTER 2000u

struct poster {
	struct mailbox *mb;
	uint64_t index;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;

	for (uint32_t n = 0; n < PER_POSTER; n++) {
		struct mail *m = mail_new(MAIL_EVENT_PENDING, p->index);

		m->request_id = n;
		mailbox_post(p->mb, m);
		if (n % 64 == 0)
			sched_yield();
	}
	return NULL;
}

/* Several threads post while this one drains: each thread's mail comes
 * out in its own order, none lost or repeated. */
START_TEST(test_threads_keep_order)
{
	struct mailbox *mb = mailbox_new(ctx);
	struct poster p[NPOSTERS];
	pthread_t t[NPOSTERS];
	uint32_t next[NPOSTERS] = { 0 }, total = 0;
	unsigned bad = 0, batches = 0;

	for (uint64_t i = 0; i < NPOSTERS; i++) {
		p[i] = (struct poster){ mb, i };
		ck_assert_int_eq(pthread_create(&t[i], NULL, poster_main, &p[i]), 0);
	}
	while (total < NPOSTERS * PER_POSTER) {
		struct mail *m = mailbox_drain(mb), *nx;

		batches += m != NULL;
		for (; m; m = nx) {
			nx = m->next;
			if (m->conn_id >= NPOSTERS || m->request_id != next[m->conn_id])
				bad++;
			else
				next[m->conn_id]++;
			total++;
			mail_free(m);
		}
		sched_yield();
	}
	for (int i = 0; i < NPOSTERS; i++) {
		pthread_join(t[i], NULL);
		ck_assert_uint_eq(next[i], PER_POSTER);
	}
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(total, NPOSTERS * PER_POSTER);
	ck_assert_uint_gt(batches, 1);
	ck_assert_ptr_null(mailbox_drain(mb));
	mailbox_free(mb);
}
END_TEST

static void *late_poster_main(void *arg)
{
	struct timespec ts = { 0, 50 * 1000000L };

	nanosleep(&ts, NULL);
	for (int i = 0; i < 3; i++)
		mailbox_post(arg, mail_new(MAIL_LINK_UP, (uint64_t)i));
	return NULL;
}

/* A post from another thread wakes the service loop, whose callback then
 * finds the mail. */
START_TEST(test_post_wakes_service)
{
	struct mailbox *mb = mailbox_new(ctx);
	pthread_t t;
	time_t give_up = time(NULL) + 30; /* a guard against a hang: the loop ends at the third mail */

	wake_mb = mb;
	ck_assert_int_eq(pthread_create(&t, NULL, late_poster_main, mb), 0);
	while (wake_got < 3 && time(NULL) < give_up)
		lws_service(ctx, 100);
	pthread_join(t, NULL);
	ck_assert_uint_eq(wake_got, 3);
	ck_assert_int_ge(wake_count, 1);
	wake_mb = NULL;
	mailbox_free(mb);
}
END_TEST

static Suite *mailbox_suite(void)
{
	Suite *s = suite_create("mailbox");
	TCase *tc = tcase_create("mailbox");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, test_fifo_drain);
	tcase_add_test(tc, test_mail_free_every_kind);
	tcase_add_test(tc, test_free_with_queued_mail);
	tcase_add_test(tc, test_post_list);
	tcase_add_test(tc, test_threads_keep_order);
	tcase_add_test(tc, test_post_wakes_service);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(mailbox_suite());
}
