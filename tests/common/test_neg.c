/*
 * test_neg.c - checks common/neg.c: fingerprints against the spec's
 * definition written out by hand (a 256-bit sum, varint(count), SHA-256),
 * varints and bounds in golden bytes, malformed messages refused, and
 * whole reconciliations between two random sets that must end with each
 * side knowing exactly the symmetric difference, whatever the frame limit.
 */
#include <check.h>
#include <openssl/sha.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../common/neg.h"
#include "../support/splitmix.h"
#include "../support/suite.h"

static struct splitmix rng;

static void random_id(uint8_t id[NEG_ID_LEN])
{
	for (int i = 0; i < NEG_ID_LEN; i += 8) {
		uint64_t v = splitmix_next(&rng);

		memcpy(id + i, &v, 8);
	}
}

/* The fingerprint the spec defines, byte by byte: the ids added as
 * little-endian numbers with carries, then varint(n) (n < 128 here). */
static void ref_fingerprint(const struct neg_item *items, size_t n, uint8_t out[NEG_FP_LEN])
{
	uint8_t sum[33] = { 0 }, hash[32];

	ck_assert_uint_lt(n, 128);
	for (size_t i = 0; i < n; i++) {
		unsigned carry = 0;

		for (int b = 0; b < 32; b++) {
			unsigned v = sum[b] + items[i].id[b] + carry;

			sum[b] = (uint8_t)v;
			carry = v >> 8;
		}
	}
	sum[32] = (uint8_t)n;
	SHA256(sum, 33, hash);
	memcpy(out, hash, NEG_FP_LEN);
}

START_TEST(test_fingerprint_matches_definition)
{
	struct neg_item items[100];
	uint8_t got[NEG_FP_LEN], want[NEG_FP_LEN];

	rng.state = 7 + (uint64_t)_i;
	for (size_t i = 0; i < 100; i++) {
		random_id(items[i].id);
		if (i % 3 == 0)
			memset(items[i].id, 0xff, NEG_ID_LEN); /* carries through every byte */
	}
	for (size_t n = 0; n <= 100; n += 7) {
		neg_fingerprint(items, n, got);
		ref_fingerprint(items, n, want);
		ck_assert_mem_eq(got, want, NEG_FP_LEN);
	}
}
END_TEST

/* The empty set: SHA-256 of 32 zero bytes and the varint 0. */
START_TEST(test_fingerprint_empty_golden)
{
	static const uint8_t want[NEG_FP_LEN] = { 0x7f, 0x9c, 0x9e, 0x31, 0xac, 0x82, 0x56, 0xca,
						   0x2f, 0x25, 0x85, 0x83, 0xdf, 0x26, 0x2d, 0xbc };
	uint8_t got[NEG_FP_LEN], zeros[33] = { 0 }, hash[32];

	SHA256(zeros, 33, hash);
	ck_assert_mem_eq(hash, want, NEG_FP_LEN);
	neg_fingerprint(NULL, 0, got);
	ck_assert_mem_eq(got, want, NEG_FP_LEN);
}
END_TEST

/* A set of fewer than 32 items is sent whole: version, infinity bound
 * (timestamp 0, no prefix), IdList, count, ids. */
START_TEST(test_initiate_golden_idlist)
{
	struct neg_item items[2] = { { 5, { 0xaa } }, { 9, { 0xbb } } };
	struct buf b = BUF_INIT;

	ck_assert_int_eq(neg_initiate(items, 2, 60000, &b), 0);
	ck_assert_uint_eq(b.len, 5 + 64);
	ck_assert_mem_eq(b.data, "\x61\x00\x00\x02\x02", 5);
	ck_assert_mem_eq(b.data + 5, items[0].id, 32);
	ck_assert_mem_eq(b.data + 37, items[1].id, 32);
	buf_free(&b);
}
END_TEST

/* 200 items become 16 fingerprint ranges whose bounds are timestamp
 * deltas; a varint of 300 is two bytes, 0x82 0x2c. */
START_TEST(test_initiate_buckets_and_varints)
{
	struct neg_item items[200];
	struct buf b = BUF_INIT;

	memset(items, 0, sizeof(items));
	for (int i = 0; i < 200; i++) {
		items[i].ts = 300 + (uint64_t)i * 10;
		items[i].id[0] = (uint8_t)i;
	}
	ck_assert_int_eq(neg_initiate(items, 200, 60000, &b), 0);
	/* The first bucket holds 13 items (200 = 16 * 12 + 8): its upper bound is
	 * item 13's timestamp, 430, as delta 1 + 430 = 431 = 0x83 0x2f. */
	ck_assert_mem_eq(b.data, "\x61\x83\x2f\x00\x01", 5);
	/* 16 ranges of bound (2-3 bytes) + mode + 16 fingerprint bytes. */
	ck_assert_uint_gt(b.len, 1 + 16 * 18);
	buf_free(&b);
}
END_TEST

static int reconcile_raw(const char *in, size_t len, bool initiator)
{
	struct neg_item items[3] = { { 1, { 1 } }, { 2, { 2 } }, { 3, { 3 } } };
	struct neg_side side = { initiator, NULL, NULL, NULL, false };
	struct buf b = BUF_INIT;
	int rc = neg_reconcile(items, 3, (const uint8_t *)in, len, 60000, &side, &b);

	if (rc)
		ck_assert_uint_eq(b.len, 0);
	buf_free(&b);
	return rc;
}

START_TEST(test_malformed_refused)
{
	ck_assert_int_eq(reconcile_raw("", 0, false), ERR_INVAL);
	ck_assert_int_eq(reconcile_raw("\x59", 1, false), ERR_INVAL);         /* not 0x6_ */
	ck_assert_int_eq(reconcile_raw("\x61\x00", 2, false), ERR_INVAL);     /* bound cut */
	ck_assert_int_eq(reconcile_raw("\x61\x00\x00\x03", 4, false), ERR_INVAL); /* mode 3 */
	ck_assert_int_eq(reconcile_raw("\x61\x00\x21", 3, false), ERR_INVAL); /* prefix 33 */
	ck_assert_int_eq(reconcile_raw("\x61\x00\x00\x01\x00", 5, false), ERR_INVAL); /* short fp */
	ck_assert_int_eq(reconcile_raw("\x61\x00\x00\x02\x05", 5, false), ERR_INVAL); /* ids cut */
	ck_assert_int_eq(reconcile_raw("\x61\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f", 12,
				       false), ERR_INVAL); /* varint over 64 bits */
	ck_assert_int_eq(reconcile_raw("\x62", 1, true), ERR_VERSION);
	ck_assert_int_eq(reconcile_raw("\x61", 1, false), 0);
}
END_TEST

/* A responder answers another version with the one byte 0x61. */
START_TEST(test_other_version_answered)
{
	struct neg_side side = { false, NULL, NULL, NULL, false };
	struct buf b = BUF_INIT;

	ck_assert_int_eq(neg_reconcile(NULL, 0, (const uint8_t *)"\x62\x00", 2, 60000, &side, &b), 0);
	ck_assert_uint_eq(b.len, 1);
	ck_assert_uint_eq((uint8_t)b.data[0], NEG_VERSION);
	buf_free(&b);
}
END_TEST

/* ---- whole reconciliations ---- */

struct found {
	uint8_t (*ids)[NEG_ID_LEN];
	size_t n, cap;
};

static void found_add(void *arg, const uint8_t id[NEG_ID_LEN])
{
	struct found *f = arg;

	if (f->n == f->cap) {
		f->cap = f->cap ? f->cap * 2 : 64;
		f->ids = realloc(f->ids, f->cap * NEG_ID_LEN);
		ck_assert_ptr_nonnull(f->ids);
	}
	memcpy(f->ids[f->n++], id, NEG_ID_LEN);
}

static int id_cmp(const void *a, const void *b)
{
	return memcmp(a, b, NEG_ID_LEN);
}

/* Sorts found ids and compares with want (also sorted). */
static void assert_found(struct found *f, struct neg_item *want, size_t n)
{
	uint8_t (*ids)[NEG_ID_LEN] = calloc(n + 1, NEG_ID_LEN);

	for (size_t i = 0; i < n; i++)
		memcpy(ids[i], want[i].id, NEG_ID_LEN);
	qsort(ids, n, NEG_ID_LEN, id_cmp);
	if (f->n)
		qsort(f->ids, f->n, NEG_ID_LEN, id_cmp);
	ck_assert_uint_eq(f->n, n);
	if (n)
		ck_assert_mem_eq(f->ids, ids, n * NEG_ID_LEN);
	free(ids);
}

struct sets {
	struct neg_item *client, *server, *only_client, *only_server;
	size_t nc, ns, noc, nos;
};

/* Random sets: shared items and items on one side only, with timestamps
 * from a narrow range (many ties) or a wide one. */
static void make_sets(struct sets *s, size_t shared, size_t oc, size_t os, uint64_t spread)
{
	size_t total = shared + oc + os;

	s->client = calloc(total + 1, sizeof(struct neg_item));
	s->server = calloc(total + 1, sizeof(struct neg_item));
	s->only_client = calloc(oc + 1, sizeof(struct neg_item));
	s->only_server = calloc(os + 1, sizeof(struct neg_item));
	s->nc = s->ns = s->noc = s->nos = 0;
	for (size_t i = 0; i < total; i++) {
		struct neg_item it;

		it.ts = 1700000000 + splitmix_next(&rng) % spread;
		random_id(it.id);
		if (i < shared) {
			s->client[s->nc++] = it;
			s->server[s->ns++] = it;
		} else if (i < shared + oc) {
			s->client[s->nc++] = it;
			s->only_client[s->noc++] = it;
		} else {
			s->server[s->ns++] = it;
			s->only_server[s->nos++] = it;
		}
	}
	neg_sort(s->client, s->nc);
	neg_sort(s->server, s->ns);
}

static void free_sets(struct sets *s)
{
	free(s->client);
	free(s->server);
	free(s->only_client);
	free(s->only_server);
}

struct both {
	struct found *have, *need;
};

static void on_have(void *arg, const uint8_t id[NEG_ID_LEN])
{
	found_add(((struct both *)arg)->have, id);
}

static void on_need(void *arg, const uint8_t id[NEG_ID_LEN])
{
	found_add(((struct both *)arg)->need, id);
}

/* Runs the protocol to its end, every message within frame; returns the
 * rounds taken. */
static int run_sync(const struct sets *s, size_t frame, struct found *have, struct found *need)
{
	struct both both = { have, need };
	struct neg_side client = { true, on_have, on_need, &both, false };
	struct neg_side server = { false, NULL, NULL, NULL, false };
	struct buf to_server = BUF_INIT, to_client = BUF_INIT;
	int rounds = 0;

	ck_assert_int_eq(neg_initiate(s->client, s->nc, frame, &to_server), 0);
	while (!client.done) {
		ck_assert_uint_le(to_server.len, frame);
		buf_reset(&to_client);
		ck_assert_int_eq(neg_reconcile(s->server, s->ns, (uint8_t *)to_server.data,
					       to_server.len, frame, &server, &to_client), 0);
		ck_assert_uint_le(to_client.len, frame);
		ck_assert_int_lt(++rounds, 1000);
		buf_reset(&to_server);
		ck_assert_int_eq(neg_reconcile(s->client, s->nc, (uint8_t *)to_client.data,
					       to_client.len, frame, &client, &to_server), 0);
	}
	buf_free(&to_server);
	buf_free(&to_client);
	return rounds;
}

static const struct {
	size_t shared, oc, os;
	uint64_t spread;
	size_t frame;
} sync_cases[] = {
	{ 0, 0, 0, 1000, 60000 },
	{ 0, 50, 0, 1000, 60000 },
	{ 0, 0, 50, 1000, 60000 },
	{ 1000, 0, 0, 1000, 60000 },
	{ 1000, 1, 1, 1000, 60000 },
	{ 5000, 30, 40, 3, 60000 },      /* mostly ties */
	{ 2000, 300, 300, 100000, NEG_FRAME_MIN }, /* many frames */
	{ 0, 2000, 2000, 1, NEG_FRAME_MIN },     /* one timestamp, all different */
	{ 20000, 200, 10, 10000000, 8192 },
};

START_TEST(test_sync_finds_symmetric_difference)
{
	struct sets s;
	struct found have = { 0 }, need = { 0 };
	int rounds;

	rng.state = 1000 + (uint64_t)_i;
	make_sets(&s, sync_cases[_i].shared, sync_cases[_i].oc, sync_cases[_i].os,
		  sync_cases[_i].spread);
	rounds = run_sync(&s, sync_cases[_i].frame, &have, &need);
	assert_found(&have, s.only_client, s.noc);
	assert_found(&need, s.only_server, s.nos);
	if (sync_cases[_i].frame == NEG_FRAME_MIN && s.noc + s.nos > 1000)
		ck_assert_int_gt(rounds, 3); /* more than one frame of ids */
	free(have.ids);
	free(need.ids);
	free_sets(&s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("neg");
	TCase *tc = tcase_create("neg");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_fingerprint_matches_definition, 0, 4);
	tcase_add_test(tc, test_fingerprint_empty_golden);
	tcase_add_test(tc, test_initiate_golden_idlist);
	tcase_add_test(tc, test_initiate_buckets_and_varints);
	tcase_add_test(tc, test_malformed_refused);
	tcase_add_test(tc, test_other_version_answered);
	tcase_add_loop_test(tc, test_sync_finds_symmetric_difference, 0,
			    (int)(sizeof(sync_cases) / sizeof(sync_cases[0])));
	suite_add_tcase(s, tc);
	return suite_run(s);
}
