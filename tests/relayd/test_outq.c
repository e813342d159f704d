/*
 * test_outq.c - checks relayd/outq.c: FIFO order, byte and count
 * accounting, splice, and that a shared body's references are released
 * exactly (the sanitizer build turns a leak or double free into a failure),
 * and that dropping expired deliveries (or any chosen ones) keeps the rest
 * in order.
 * A random sequence of operations on three queues is checked against a
 * plain array model of each queue.
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../relayd/outq.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

static struct splitmix rng;

/* A malloc'ed copy of s, as outq_push takes it. */
static char *head_dup(const char *s)
{
	char *h = strdup(s);

	ck_assert_ptr_nonnull(h);
	return h;
}

static void push(struct outq *q, const char *head, struct shared *body, char tail)
{
	ck_assert_int_eq(outq_push(q, head_dup(head), strlen(head), body, tail), 0);
}

/* Pops one item and checks its head; frees it. */
static void pop_expect(struct outq *q, const char *head)
{
	struct out_item *item = outq_pop(q);

	ck_assert_ptr_nonnull(item);
	ck_assert_ptr_null(item->next);
	ck_assert_uint_eq(item->head_len, strlen(head));
	ck_assert_int_eq(memcmp(item->head, head, item->head_len), 0);
	out_item_free(item);
}

START_TEST(test_shared)
{
	struct shared *s = shared_new("{\"a\":1}", 7);

	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(s->refs, 1);
	ck_assert_uint_eq(s->len, 7);
	ck_assert_int_eq(memcmp(s->data, "{\"a\":1}", 7), 0);
	s->refs++;
	shared_unref(s);
	ck_assert_uint_eq(s->refs, 1);
	shared_unref(s);
	shared_unref(NULL);
	/* An empty body is allowed. */
	shared_unref(shared_new("", 0));
}
END_TEST

START_TEST(test_fifo_and_accounting)
{
	struct outq q = { 0 };
	struct shared *body = shared_new("0123456789", 10);

	ck_assert_ptr_null(outq_pop(&q));
	push(&q, "first", NULL, '\0');
	ck_assert_uint_eq(q.bytes, 5);
	push(&q, "[\"EVENT\",\"s\",", body, ']');
	ck_assert_uint_eq(q.bytes, 5 + 13 + 10 + 1);
	push(&q, "", NULL, ']');
	ck_assert_uint_eq(q.bytes, 5 + 13 + 10 + 1 + 1);
	ck_assert_uint_eq(q.count, 3);
	ck_assert_uint_eq(out_item_size(q.first), 5);
	ck_assert_uint_eq(out_item_size(q.first->next), 24);
	ck_assert_ptr_eq(q.first->next->body, body);
	ck_assert_int_eq(q.first->next->tail, ']');
	pop_expect(&q, "first");
	ck_assert_uint_eq(q.bytes, 25);
	pop_expect(&q, "[\"EVENT\",\"s\",");
	ck_assert_uint_eq(q.bytes, 1);
	pop_expect(&q, "");
	ck_assert_uint_eq(q.bytes, 0);
	ck_assert_uint_eq(q.count, 0);
	ck_assert_ptr_null(q.first);
	ck_assert_ptr_null(q.last);
	ck_assert_ptr_null(outq_pop(&q));
	/* Usable again after emptying. */
	push(&q, "again", NULL, '\0');
	ck_assert_ptr_eq(q.first, q.last);
	outq_clear(&q);
	ck_assert_uint_eq(q.count, 0);
	ck_assert_uint_eq(q.bytes, 0);
	ck_assert_ptr_null(q.first);
	ck_assert_ptr_null(q.last);
	outq_clear(&q);
	out_item_free(NULL);
}
END_TEST

/* One body delivered to three queues: each delivery holds a reference and
 * the body goes exactly when the last one is freed. */
START_TEST(test_shared_fan_out)
{
	struct outq q[3] = { { 0 } };
	struct shared *body = shared_new("{\"id\":\"x\"}", 10);
	struct out_item *item;

	for (int i = 0; i < 3; i++) {
		body->refs++; /* the delivery's reference */
		push(&q[i], "[\"EVENT\",\"sub\",", body, ']');
	}
	shared_unref(body); /* the creator's */
	ck_assert_uint_eq(body->refs, 3);
	outq_clear(&q[0]);
	ck_assert_uint_eq(body->refs, 2);
	item = outq_pop(&q[1]);
	ck_assert_uint_eq(body->refs, 2); /* popping moves the reference */
	out_item_free(item);
	ck_assert_uint_eq(body->refs, 1);
	outq_clear(&q[2]); /* frees the body */
}
END_TEST

START_TEST(test_splice)
{
	struct outq to = { 0 }, from = { 0 };
	struct shared *body = shared_new("abc", 3);

	/* Empty into empty. */
	outq_splice(&to, &from);
	ck_assert_ptr_null(to.first);
	ck_assert_uint_eq(to.count, 0);
	/* Non-empty into empty. */
	push(&from, "a", NULL, '\0');
	push(&from, "b", body, ']');
	outq_splice(&to, &from);
	ck_assert_uint_eq(to.count, 2);
	ck_assert_uint_eq(to.bytes, 1 + 1 + 3 + 1);
	ck_assert_ptr_null(from.first);
	ck_assert_ptr_null(from.last);
	ck_assert_uint_eq(from.count, 0);
	ck_assert_uint_eq(from.bytes, 0);
	/* Non-empty into non-empty, then pushes on both sides stay separate. */
	push(&from, "c", NULL, '\0');
	push(&from, "dd", NULL, '\0');
	outq_splice(&to, &from);
	push(&to, "e", NULL, '\0');
	push(&from, "z", NULL, '\0');
	ck_assert_uint_eq(to.count, 5);
	ck_assert_uint_eq(to.bytes, 6 + 1 + 2 + 1);
	/* Empty into non-empty changes nothing. */
	outq_clear(&from);
	outq_splice(&to, &from);
	ck_assert_uint_eq(to.count, 5);
	pop_expect(&to, "a");
	pop_expect(&to, "b");
	pop_expect(&to, "c");
	pop_expect(&to, "dd");
	pop_expect(&to, "e");
	ck_assert_ptr_null(outq_pop(&to));
	ck_assert_uint_eq(to.bytes, 0);
}
END_TEST

/* The model of one queue: item labels in order, and their sizes. */
struct model {
	unsigned labels[4096];
	size_t sizes[4096];
	size_t n;
};

/* Compares q with its model; plain comparisons keep the loop cheap (each
 * passing ck_assert costs check a write to its parent). */
static void model_check(const struct outq *q, const struct model *m)
{
	const struct out_item *item = q->first, *last = NULL;
	size_t bytes = 0;
	unsigned label;

	if (q->count != m->n)
		ck_abort_msg("count %zu, model %zu", q->count, m->n);
	for (size_t i = 0; i < m->n; i++, item = item->next) {
		if (!item || sscanf(item->head, "%u", &label) != 1 || label != m->labels[i] ||
		    out_item_size(item) != m->sizes[i])
			ck_abort_msg("item %zu differs from the model (label %u)", i, m->labels[i]);
		bytes += m->sizes[i];
		last = item;
	}
	if (item || q->last != last || q->bytes != bytes)
		ck_abort_msg("queue end or bytes (%zu, model %zu) differ", q->bytes, bytes);
}

/* NIP-40: items whose body expired at or before now go, the rest stay in
 * order with their accounting; bodyless and unexpiring items stay. */
START_TEST(test_drop_expired)
{
	struct outq q = { 0 };
	struct shared *past = shared_new("pp", 2), *now_b = shared_new("nn", 2),
		      *later = shared_new("ll", 2), *never = shared_new("xx", 2);

	past->expiration = 999;
	now_b->expiration = 1000;
	later->expiration = 1001;
	now_b->refs++; /* two deliveries of the same event */
	push(&q, "a", past, ']');
	push(&q, "b", later, ']');
	push(&q, "c", now_b, ']');
	push(&q, "d", NULL, '\0');
	push(&q, "e", now_b, ']');
	push(&q, "f", never, ']');
	ck_assert_uint_eq(outq_drop_expired(&q, 1000), 3);
	ck_assert_uint_eq(q.count, 3);
	ck_assert_uint_eq(q.bytes, (1 + 2 + 1) + 1 + (1 + 2 + 1));
	pop_expect(&q, "b");
	pop_expect(&q, "d");
	pop_expect(&q, "f");
	ck_assert_ptr_null(q.first);
	ck_assert_ptr_null(q.last);
	/* Nothing to drop, and an empty queue. */
	push(&q, "g", NULL, '\0');
	ck_assert_uint_eq(outq_drop_expired(&q, 2000), 0);
	ck_assert_uint_eq(q.count, 1);
	outq_clear(&q);
	ck_assert_uint_eq(outq_drop_expired(&q, 2000), 0);
	ck_assert_ptr_null(q.first);
}
END_TEST

/* The predicate sees each item once, with the caller's argument. */
static bool seq_in_range(const struct out_item *item, void *arg)
{
	const uint64_t *range = arg;

	return item->body && item->body->commit_seq > range[0] && item->body->commit_seq < range[1];
}

/* What the worker does with held deliveries a replay brings anyway: the
 * items chosen go, the rest keep their order and accounting. */
START_TEST(test_drop_if)
{
	struct outq q = { 0 };
	uint64_t range[2] = { 10, 20 };
	struct shared *b[5];
	uint64_t seqs[5] = { 5, 11, 19, 20, 0 };
	const char *heads[5] = { "a", "b", "c", "d", "e" };

	for (int i = 0; i < 5; i++) {
		b[i] = shared_new("xyz", 3);
		b[i]->commit_seq = seqs[i];
		push(&q, heads[i], b[i], ']');
	}
	push(&q, "f", NULL, '\0');
	ck_assert_uint_eq(outq_drop_if(&q, seq_in_range, range), 2);
	ck_assert_uint_eq(q.count, 4);
	ck_assert_uint_eq(q.bytes, 3 * (1 + 3 + 1) + 1);
	pop_expect(&q, "a");
	pop_expect(&q, "d");
	pop_expect(&q, "e");
	pop_expect(&q, "f");
	ck_assert_ptr_null(q.first);
	ck_assert_ptr_null(q.last);
	ck_assert_uint_eq(outq_drop_if(&q, seq_in_range, range), 0);
}
END_TEST

START_TEST(test_random_against_model)
{
	static struct model m[3];
	struct outq q[3] = { { 0 } };
	struct shared *bodies[4];
	unsigned next_label = 0;

	rng.state = 31337;
	for (int i = 0; i < 4; i++) {
		char text[16];
		int n = snprintf(text, sizeof(text), "body%d-%.*s", i, i * 2, "xxxxxxxx");

		bodies[i] = shared_new(text, (size_t)n);
	}
	memset(m, 0, sizeof(m));
	for (int step = 0; step < 3000; step++) {
		unsigned a = (unsigned)(splitmix_next(&rng) % 3);
		unsigned b = (unsigned)(splitmix_next(&rng) % 3);
		uint64_t op = splitmix_next(&rng) % 10;

		if (op < 6 && m[a].n < 1000) {
			struct shared *body =
			    splitmix_next(&rng) % 2 ? bodies[splitmix_next(&rng) % 4] : NULL;
			char head[32];
			char tail = splitmix_next(&rng) % 2 ? ']' : '\0';
			int n = snprintf(head, sizeof(head), "%u%.*s", next_label,
					 (int)(splitmix_next(&rng) % 8), "-------");

			if (body)
				body->refs++;
			ck_assert_int_eq(outq_push(&q[a], strdup(head), (size_t)n, body, tail), 0);
			m[a].labels[m[a].n] = next_label++;
			m[a].sizes[m[a].n++] = (size_t)n + (body ? body->len : 0) + (tail ? 1 : 0);
		} else if (op < 9 && m[a].n) {
			out_item_free(outq_pop(&q[a]));
			memmove(m[a].labels, m[a].labels + 1, --m[a].n * sizeof(unsigned));
			memmove(m[a].sizes, m[a].sizes + 1, m[a].n * sizeof(size_t));
		} else if (a != b && m[a].n + m[b].n < 4096) {
			outq_splice(&q[a], &q[b]);
			memcpy(m[a].labels + m[a].n, m[b].labels, m[b].n * sizeof(unsigned));
			memcpy(m[a].sizes + m[a].n, m[b].sizes, m[b].n * sizeof(size_t));
			m[a].n += m[b].n;
			m[b].n = 0;
		}
		if (step % 50 == 0)
			for (int i = 0; i < 3; i++)
				model_check(&q[i], &m[i]);
	}
	for (int i = 0; i < 3; i++) {
		model_check(&q[i], &m[i]);
		outq_clear(&q[i]);
	}
	/* Every delivery's reference is gone: only the creators' remain. */
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(bodies[i]->refs, 1);
		shared_unref(bodies[i]);
	}
}
END_TEST

static Suite *outq_suite(void)
{
	Suite *s = suite_create("outq");
	TCase *tc = tcase_create("outq");

	tcase_add_test(tc, test_shared);
	tcase_add_test(tc, test_fifo_and_accounting);
	tcase_add_test(tc, test_shared_fan_out);
	tcase_add_test(tc, test_splice);
	tcase_add_test(tc, test_drop_expired);
	tcase_add_test(tc, test_drop_if);
	tcase_add_test(tc, test_random_against_model);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(outq_suite());
}
