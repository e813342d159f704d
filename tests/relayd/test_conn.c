/*
 * test_conn.c - checks relayd/conn.c: connection ids (slot + generation), a
 * reused slot's new generation, generations counted from the table's base
 * (another base, another id; never 0), conn_find on live, closed and random ids
 * (a random open/close sequence against a plain array of live ids),
 * subscriptions (add, find by id and by serial, remove), pending events
 * (order kept), the scratch buffer, that marking a connection closing
 * drops its queue once (conn_set_closing), and that closing or freeing
 * releases everything a connection owns (the sanitizer build checks for
 * leaks).
 *
 * The wsi is always NULL: conn.c stores it and never dereferences it.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../../relayd/conn.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

static struct splitmix rng;

/* n filters with owned arrays, as a parsed REQ would hand over. */
static struct filter *make_filters(uint32_t n)
{
	struct filter *f = calloc(n ? n : 1, sizeof(*f));

	for (uint32_t i = 0; i < n; i++) {
		filter_init(&f[i]);
		f[i].has_kinds = true;
		f[i].nkinds = 2;
		f[i].kinds = malloc(2 * sizeof(uint32_t));
		f[i].kinds[0] = 1;
		f[i].kinds[1] = i;
		f[i].search = strdup("text");
	}
	return f;
}

START_TEST(test_ids_and_generations)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *a = conn_open(t, NULL), *b = conn_open(t, NULL), *c;
	uint64_t old_id;
	uint32_t b_slot;

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_null(a->wsi);
	ck_assert_uint_ne(a->id, b->id);
	ck_assert_uint_ne(conn_id_slot(a->id), conn_id_slot(b->id));
	ck_assert_uint_ne(a->id >> 32, 0); /* a generation is never 0 */
	ck_assert_ptr_eq(conn_find(t, a->id), a);
	ck_assert_ptr_eq(conn_find(t, b->id), b);
	ck_assert_uint_eq(conn_count(t), 2);

	old_id = a->id;
	conn_close(t, a);
	ck_assert_ptr_null(conn_find(t, old_id));
	ck_assert_uint_eq(conn_count(t), 1);
	/* The slot is reused with a new generation. */
	c = conn_open(t, NULL);
	ck_assert_uint_eq(conn_id_slot(c->id), conn_id_slot(old_id));
	ck_assert_uint_ne(c->id, old_id);
	ck_assert_uint_ne(c->id >> 32, old_id >> 32);
	ck_assert_ptr_null(conn_find(t, old_id));
	ck_assert_ptr_eq(conn_find(t, c->id), c);
	ck_assert_ptr_eq(conn_find(t, b->id), b);
	/* Same slot, other generations: nothing. */
	ck_assert_ptr_null(conn_find(t, c->id + ((uint64_t)1 << 32)));
	ck_assert_ptr_null(conn_find(t, c->id & 0xffffffffu));
	/* By slot: whoever holds it now, or nothing once it is free. */
	ck_assert_ptr_eq(conn_in_slot(t, conn_id_slot(old_id)), c);
	b_slot = conn_id_slot(b->id);
	ck_assert_ptr_eq(conn_in_slot(t, b_slot), b);
	conn_close(t, b);
	ck_assert_ptr_null(conn_in_slot(t, b_slot));
	ck_assert_ptr_null(conn_in_slot(t, 1u << 20));
	conn_table_free(t);
	conn_table_free(NULL);
}
END_TEST

START_TEST(test_generation_base)
{
	struct conn_table *a = conn_table_new(0x1234), *b = conn_table_new(0x9876);
	struct conn_table *top = conn_table_new(UINT32_MAX);
	struct conn *ca = conn_open(a, NULL), *cb = conn_open(b, NULL), *ct;
	uint32_t slot;

	/* The same slot, told apart by the generation a restarted worker
	 * starts from. */
	ck_assert_uint_eq(conn_id_slot(ca->id), conn_id_slot(cb->id));
	ck_assert_uint_ne(ca->id, cb->id);
	ck_assert_uint_eq(ca->id >> 32, 0x1235);
	ck_assert_ptr_null(conn_find(a, cb->id));
	/* Slots added when the table grows count from the base too. */
	for (int i = 0; i < 300; i++)
		ck_assert_uint_eq(conn_open(a, NULL)->id >> 32, 0x1235);
	/* A base at the top wraps past 0. */
	ct = conn_open(top, NULL);
	ck_assert_uint_eq(ct->id >> 32, 1);
	slot = conn_id_slot(ct->id);
	conn_close(top, ct);
	ct = conn_open(top, NULL);
	ck_assert_uint_eq(conn_id_slot(ct->id), slot);
	ck_assert_uint_eq(ct->id >> 32, 2);
	conn_table_free(a);
	conn_table_free(b);
	conn_table_free(top);
}
END_TEST

/* Reusing one slot many times never repeats an id. */
START_TEST(test_slot_reuse_many_times)
{
	struct conn_table *t = conn_table_new(0);
	uint64_t *seen = malloc(1000 * sizeof(uint64_t));
	int repeats = 0;

	for (int i = 0; i < 1000; i++) {
		struct conn *c = conn_open(t, NULL);

		seen[i] = c->id;
		for (int j = 0; j < i; j++)
			repeats += seen[j] == c->id;
		conn_close(t, c);
	}
	ck_assert_int_eq(repeats, 0);
	ck_assert_uint_eq(conn_id_slot(seen[999]), conn_id_slot(seen[0]));
	ck_assert_uint_eq(conn_count(t), 0);
	free(seen);
	conn_table_free(t);
}
END_TEST

START_TEST(test_find_random_ids)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c[10];
	int wrong = 0;

	ck_assert_ptr_null(conn_find(t, 0));
	for (int i = 0; i < 10; i++)
		c[i] = conn_open(t, NULL);
	rng.state = 5;
	for (int i = 0; i < 100000; i++) {
		uint64_t id = splitmix_next(&rng);
		struct conn *found;

		/* Half the probes hit a real slot, with a random generation. */
		if (i % 2)
			id = (id & ~(uint64_t)0xffffffffu) | (id % 12);
		found = conn_find(t, id);
		for (int k = 0; k < 10; k++)
			if (c[k]->id == id)
				wrong += found != c[k];
		if (found && found->id != id)
			wrong++;
	}
	ck_assert_int_eq(wrong, 0);
	conn_table_free(t);
}
END_TEST

/* Random opens and closes against a plain array of what is open; every
 * live id resolves to its connection and every closed id to nothing. */
START_TEST(test_random_against_model)
{
	enum { MAXLIVE = 600, MAXDEAD = 4000 };
	struct conn_table *t = conn_table_new(0);
	static struct conn *live[MAXLIVE];
	static uint64_t dead[MAXDEAD];
	size_t nlive = 0, ndead = 0;
	int wrong = 0;

	rng.state = 99;
	for (int step = 0; step < 8000; step++) {
		if (nlive < MAXLIVE && (nlive == 0 || splitmix_next(&rng) % 100 < 55)) {
			live[nlive] = conn_open(t, NULL);
			ck_assert_ptr_nonnull(live[nlive]);
			nlive++;
		} else {
			size_t k = splitmix_next(&rng) % nlive;

			if (ndead < MAXDEAD)
				dead[ndead++] = live[k]->id;
			conn_close(t, live[k]);
			live[k] = live[--nlive];
		}
		if (step % 100 != 0)
			continue;
		wrong += conn_count(t) != nlive;
		for (size_t i = 0; i < nlive; i++)
			wrong += conn_find(t, live[i]->id) != live[i];
		for (size_t i = 0; i < ndead; i++)
			wrong += conn_find(t, dead[i]) != NULL;
	}
	ck_assert_int_eq(wrong, 0);
	ck_assert_uint_gt(ndead, 1000);
	conn_table_free(t); /* frees those still open */
}
END_TEST

static void count_visit(struct conn *c, void *arg)
{
	uint64_t *sum = arg;

	sum[0]++;
	sum[1] ^= c->id;
}

START_TEST(test_foreach)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c[5];
	uint64_t sum[2] = { 0, 0 }, want = 0;

	for (int i = 0; i < 5; i++)
		c[i] = conn_open(t, NULL);
	conn_close(t, c[2]);
	for (int i = 0; i < 5; i++)
		if (i != 2)
			want ^= c[i]->id;
	conn_foreach(t, count_visit, sum);
	ck_assert_uint_eq(sum[0], 4);
	ck_assert_uint_eq(sum[1], want);
	conn_table_free(t);
}
END_TEST

START_TEST(test_subs)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL), *d = conn_open(t, NULL);
	struct sub *s[6];
	static const char *const ids[] = { "a", "ab", "abc", "x\"y", "\xc3\xa9", "" };

	for (uint32_t i = 0; i < 6; i++) {
		s[i] = conn_sub_add(c, ids[i], strlen(ids[i]), 100 + i, make_filters(i % 3), i % 3);
		ck_assert_ptr_nonnull(s[i]);
		ck_assert_uint_eq(s[i]->id_len, strlen(ids[i]));
		ck_assert_str_eq(s[i]->id, ids[i]);
		ck_assert_uint_eq(s[i]->nfilters, i % 3);
		ck_assert_int_eq(s[i]->state, SUB_QUERYING); /* EOSE not sent yet */
	}
	ck_assert_ptr_nonnull(conn_sub_add(d, "a", 1, 1, NULL, 0));
	ck_assert_uint_eq(conn_sub_total(t), 7);
	/* Lookups compare lengths and bytes. */
	for (uint32_t i = 0; i < 6; i++) {
		ck_assert_ptr_eq(conn_sub_find(c, ids[i], strlen(ids[i])), s[i]);
		ck_assert_ptr_eq(conn_sub_find_serial(c, 100 + i), s[i]);
	}
	ck_assert_ptr_null(conn_sub_find(c, "abcd", 4));
	ck_assert_ptr_null(conn_sub_find(c, "a\0", 2));
	ck_assert_ptr_null(conn_sub_find(c, "b", 1));
	ck_assert_ptr_null(conn_sub_find_serial(c, 99));
	ck_assert_ptr_null(conn_sub_find_serial(c, 1)); /* d's, not c's */
	/* Removing one leaves the others findable. */
	conn_sub_remove(c, s[1]);
	ck_assert_ptr_null(conn_sub_find(c, "ab", 2));
	ck_assert_ptr_null(conn_sub_find_serial(c, 101));
	for (uint32_t i = 0; i < 6; i++)
		if (i != 1)
			ck_assert_ptr_eq(conn_sub_find(c, ids[i], strlen(ids[i])), s[i]);
	ck_assert_uint_eq(c->nsubs, 5);
	ck_assert_uint_eq(conn_sub_total(t), 6);
	conn_sub_remove(c, s[0]);
	conn_sub_remove(c, s[5]);
	ck_assert_uint_eq(conn_sub_total(t), 4);
	/* Closing the connection frees the rest (sanitizer build). */
	conn_close(t, c);
	ck_assert_uint_eq(conn_sub_total(t), 1);
	conn_table_free(t);
}
END_TEST

/* Serials skip 0 and the connection's open subscriptions when the counter
 * wraps; another connection's do not matter. */
START_TEST(test_sub_serial_wrap)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL), *d = conn_open(t, NULL);
	uint32_t counter = UINT32_MAX - 3;

	ck_assert_ptr_nonnull(conn_sub_add(c, "old1", 4, 1, NULL, 0));
	ck_assert_ptr_nonnull(conn_sub_add(c, "old3", 4, 3, NULL, 0));
	ck_assert_ptr_nonnull(conn_sub_add(c, "top", 3, UINT32_MAX - 1, NULL, 0));
	ck_assert_ptr_nonnull(conn_sub_add(d, "d2", 2, 2, NULL, 0));
	ck_assert_uint_eq(conn_sub_next_serial(c, &counter), UINT32_MAX - 2);
	ck_assert_uint_eq(conn_sub_next_serial(c, &counter), UINT32_MAX); /* skips top */
	ck_assert_uint_eq(conn_sub_next_serial(c, &counter), 2); /* skips 0 and 1; d's 2 is free here */
	ck_assert_uint_eq(conn_sub_next_serial(c, &counter), 4); /* skips 3 */
	ck_assert_uint_eq(conn_sub_next_serial(d, &counter), 5);
	conn_table_free(t);
}
END_TEST

/* Ids up to 256 bytes fit; longer ones are refused and the filters freed. */
START_TEST(test_sub_id_lengths)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL);
	char id[300];
	struct sub *s;

	memset(id, 'q', sizeof(id));
	s = conn_sub_add(c, id, 256, 1, make_filters(2), 2);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(strlen(s->id), 256);
	ck_assert_ptr_null(conn_sub_add(c, id, 257, 2, make_filters(2), 2));
	ck_assert_uint_eq(c->nsubs, 1);
	conn_table_free(t);
}
END_TEST

/* Many subscriptions grow the array; each keeps held deliveries that are
 * freed with it. */
START_TEST(test_many_subs_with_held_items)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL);
	struct shared *body = shared_new("{}", 2);
	char id[16];

	for (uint32_t i = 0; i < 100; i++) {
		struct sub *s;
		int n = snprintf(id, sizeof(id), "sub%u", i);

		s = conn_sub_add(c, id, (size_t)n, i, make_filters(1), 1);
		ck_assert_ptr_nonnull(s);
		body->refs++;
		ck_assert_int_eq(outq_push(&s->held, strdup("[\"EVENT\","), 9, body, ']'), 0);
	}
	shared_unref(body);
	ck_assert_uint_eq(body->refs, 100);
	for (uint32_t i = 0; i < 100; i += 2) {
		int n = snprintf(id, sizeof(id), "sub%u", i);

		conn_sub_remove(c, conn_sub_find(c, id, (size_t)n));
	}
	ck_assert_uint_eq(body->refs, 50);
	for (uint32_t i = 1; i < 100; i += 2)
		ck_assert_ptr_nonnull(conn_sub_find_serial(c, i));
	/* The connection's own buffers go too. */
	ck_assert_int_eq(buf_append_str(&c->rx, "partial frame"), 0);
	ck_assert_int_eq(outq_push(&c->out, strdup("queued"), 6, NULL, '\0'), 0);
	conn_close(t, c);
	conn_table_free(t);
}
END_TEST

START_TEST(test_pending_order)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL);
	struct pending_event p;
	uint8_t id[32];

	for (uint32_t r = 0; r < 20; r++) {
		memset(id, (int)r, sizeof(id));
		ck_assert_int_eq(conn_pending_add(c, 1000 + r, id, 5000 + r), 0);
	}
	ck_assert_uint_eq(c->npending, 20);
	/* Take from the middle, the front and the back. */
	ck_assert_int_eq(conn_pending_take(c, 1007, &p), 0);
	ck_assert_uint_eq(p.request_id, 1007);
	ck_assert_uint_eq(p.id[31], 7);
	ck_assert_int_eq(p.deadline_ms, 5007);
	ck_assert_int_eq(conn_pending_take(c, 1000, &p), 0);
	ck_assert_int_eq(conn_pending_take(c, 1019, &p), 0);
	ck_assert_int_eq(conn_pending_take(c, 1007, &p), ERR_NOTFOUND);
	ck_assert_int_eq(conn_pending_take(c, 42, &p), ERR_NOTFOUND);
	/* The rest keep arrival order (timeouts sweep from the front). */
	ck_assert_uint_eq(c->npending, 17);
	for (uint32_t i = 0, want = 1001; i < c->npending; i++, want++) {
		if (want == 1007)
			want++;
		ck_assert_uint_eq(c->pending[i].request_id, want);
		ck_assert_uint_eq(c->pending[i].id[0], want - 1000);
	}
	conn_table_free(t);
}
END_TEST

/* The same request id twice: takes come out oldest first. */
START_TEST(test_pending_duplicate_ids)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL);
	struct pending_event p;
	uint8_t id[32] = { 0 };

	ck_assert_int_eq(conn_pending_add(c, 5, id, 1), 0);
	ck_assert_int_eq(conn_pending_add(c, 5, id, 2), 0);
	ck_assert_int_eq(conn_pending_take(c, 5, &p), 0);
	ck_assert_int_eq(p.deadline_ms, 1);
	ck_assert_int_eq(conn_pending_take(c, 5, &p), 0);
	ck_assert_int_eq(p.deadline_ms, 2);
	ck_assert_int_eq(conn_pending_take(c, 5, &p), ERR_NOTFOUND);
	conn_table_free(t);
}
END_TEST

START_TEST(test_scratch)
{
	struct conn_table *t = conn_table_new(0);
	unsigned char *small, *big, *again;

	small = conn_scratch(t, 16);
	ck_assert_ptr_nonnull(small);
	memset(small, 1, 16);
	big = conn_scratch(t, 1 << 20);
	ck_assert_ptr_nonnull(big);
	memset(big, 2, 1 << 20); /* all of it is writable (sanitizer build) */
	again = conn_scratch(t, 100);
	ck_assert_ptr_eq(again, big); /* never shrinks */
	ck_assert_ptr_eq(conn_scratch(t, 1 << 20), big);
	memset(conn_scratch(t, (1 << 20) + 1), 3, (1 << 20) + 1);
	conn_table_free(t);
}
END_TEST

/* Closing drops what was queued, shared bodies' references included, and
 * only the first call reports that it began the close. */
START_TEST(test_set_closing)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL);
	struct shared *body = shared_new("{}", 2);

	ck_assert_ptr_nonnull(body);
	ck_assert(!c->closing);
	for (int i = 0; i < 3; i++) {
		body->refs++;
		ck_assert_int_eq(outq_push(&c->out, strdup("[\"EVENT\",\"s\","), 12, body, ']'), 0);
	}
	ck_assert_uint_eq(body->refs, 4);
	ck_assert(conn_set_closing(c));
	ck_assert(c->closing);
	ck_assert_ptr_null(c->out.first);
	ck_assert_uint_eq(c->out.bytes, 0);
	ck_assert_uint_eq(c->out.count, 0);
	ck_assert_uint_eq(body->refs, 1);
	ck_assert(!conn_set_closing(c));
	ck_assert(c->closing);
	shared_unref(body);
	conn_close(t, c);
	conn_table_free(t);
}
END_TEST

static Suite *conn_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc = tcase_create("ids");

	tcase_add_test(tc, test_ids_and_generations);
	tcase_add_test(tc, test_generation_base);
	tcase_add_test(tc, test_slot_reuse_many_times);
	tcase_add_test(tc, test_find_random_ids);
	tcase_add_test(tc, test_random_against_model);
	tcase_add_test(tc, test_foreach);
	suite_add_tcase(s, tc);
	tc = tcase_create("owned");
	tcase_add_test(tc, test_subs);
	tcase_add_test(tc, test_sub_id_lengths);
	tcase_add_test(tc, test_sub_serial_wrap);
	tcase_add_test(tc, test_many_subs_with_held_items);
	tcase_add_test(tc, test_pending_order);
	tcase_add_test(tc, test_pending_duplicate_ids);
	tcase_add_test(tc, test_scratch);
	tcase_add_test(tc, test_set_closing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(conn_suite());
}
