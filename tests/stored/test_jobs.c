/*
 * test_jobs.c - checks stored/jobs.c: every free function releases a fully
 * populated job (an event with tags, filters with every list, tags and
 * search), a partly populated one, and NULL; the admin job's completion
 * slot (bounded wait, finishing from another thread, a waiter that gives up
 * first) and its listing copies (deep, bounded by count and bytes).
 *
 * The proof is the sanitizer build (`make SAN=address,undefined unit`):
 * LeakSanitizer fails the test's process if anything is left allocated, and
 * AddressSanitizer fails it on a double or invalid free.  Filters come from
 * filter_parse() so they are allocated exactly as the rpc thread does it.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/filter.h"
#include "../../stored/jobs.h"
#include "../support/suite.h"

#define HEX64 "0000000000000000000000000000000000000000000000000000000000000001"
#define HEX64B "ff00000000000000000000000000000000000000000000000000000000000002"

static const char *const filter_json[] = {
	"{\"ids\":[\"" HEX64 "\",\"" HEX64B "\"],\"authors\":[\"" HEX64 "\"],\"kinds\":[1,7,30023],"
	"\"#e\":[\"" HEX64 "\"],\"#t\":[\"a\",\"b\",\"\"],\"#T\":[\"X\"],\"since\":10,\"until\":20,"
	"\"limit\":5,\"search\":\"hello world\"}",
	"{}",
	"{\"kinds\":[],\"#p\":[]}",
	"{\"authors\":[\"" HEX64B "\"],\"#d\":[\"addr\"]}",
};
#define NFILTER_JSON (sizeof(filter_json) / sizeof(filter_json[0]))

/* An array of n parsed filters, cycling through filter_json. */
static struct filter *make_filters(uint32_t n)
{
	struct filter *filters = calloc(n ? n : 1, sizeof(*filters));
	char reason[128];

	ck_assert_ptr_nonnull(filters);
	for (uint32_t i = 0; i < n; i++) {
		cJSON *obj = cJSON_Parse(filter_json[i % NFILTER_JSON]);

		ck_assert_ptr_nonnull(obj);
		ck_assert_msg(filter_parse(obj, NULL, &filters[i], reason, sizeof(reason)) == 0,
			      "%s", reason);
		cJSON_Delete(obj);
	}
	return filters;
}

static void make_event(struct event *ev, uint32_t ntags)
{
	static const struct event_tag tags[] = {
		{ 'e', 3, "abc" }, { 'p', 0, "" }, { 'd', 5, "a\0b c" }, { 'T', 1, "x" }
	};
	uint8_t id[32] = { 1 }, pubkey[32] = { 2 }, sig[64] = { 3 };
	const char json[] = "{\"content\":\"a stored event\"}";

	ck_assert_int_eq(event_build(ev, id, pubkey, sig, 1700000000, 30023, tags, ntags, json,
				     sizeof(json) - 1),
			 0);
}

START_TEST(test_write_job_free)
{
	struct write_job *job = calloc(1, sizeof(*job));

	job->conn_id = 42;
	make_event(&job->event, 4);
	write_job_free(job);
	/* An event without tags, and a job whose event was never built. */
	job = calloc(1, sizeof(*job));
	make_event(&job->event, 0);
	write_job_free(job);
	write_job_free(calloc(1, sizeof(*job)));
	write_job_free(NULL);
}
END_TEST

START_TEST(test_bcast_job_free)
{
	struct bcast_job *job = calloc(1, sizeof(*job));

	/* Everything at once (no real job carries both, but free must cope). */
	job->kind = BCAST_SUB_OPEN;
	make_event(&job->event, 4);
	job->filters = make_filters(6);
	job->nfilters = 6;
	memcpy(job->sub_id, "sub", 3);
	job->sub_id_len = 3;
	bcast_job_free(job);

	job = calloc(1, sizeof(*job));
	job->kind = BCAST_EVENT;
	job->seq = 7;
	make_event(&job->event, 2);
	bcast_job_free(job);

	job = calloc(1, sizeof(*job));
	job->kind = BCAST_SUB_OPEN;
	job->filters = make_filters(1);
	job->nfilters = 1;
	bcast_job_free(job);

	job = calloc(1, sizeof(*job));
	job->kind = BCAST_CONN_CLOSED;
	bcast_job_free(job);
	bcast_job_free(NULL);
}
END_TEST

START_TEST(test_query_job_free)
{
	struct query_job *job = calloc(1, sizeof(*job));

	job->filters = make_filters(NFILTER_JSON * 2);
	job->nfilters = NFILTER_JSON * 2;
	job->max_seq = 99;
	query_job_free(job);

	job = calloc(1, sizeof(*job));
	query_job_free(job);
	query_job_free(NULL);
}
END_TEST

START_TEST(test_filters_free)
{
	filters_free(make_filters(NFILTER_JSON), NFILTER_JSON);
	/* An allocated array with no filters in it still goes. */
	filters_free(make_filters(0), 0);
	filters_free(NULL, 0);
	filters_free(NULL, 3);
}
END_TEST

/* A copied filter (filter_copy) is freed the same way as a parsed one. */
START_TEST(test_filters_free_copies)
{
	struct filter *src = make_filters(NFILTER_JSON);
	struct filter *dst = calloc(NFILTER_JSON, sizeof(*dst));

	for (uint32_t i = 0; i < NFILTER_JSON; i++)
		ck_assert_int_eq(filter_copy(&dst[i], &src[i]), 0);
	filters_free(src, NFILTER_JSON);
	ck_assert_int_eq(dst[0].nids, 2);
	ck_assert_str_eq(dst[0].search, "hello world");
	filters_free(dst, NFILTER_JSON);
}
END_TEST

/* ---- admin jobs: the completion slot and its references ---- */

/* The wait ends when every piece is done, not before; a wait that runs out
 * says so. */
START_TEST(test_admin_job_wait)
{
	struct admin_job *a = admin_job_new(ADMIN_OP_CHECKPOINT, 2, 0);

	ck_assert_ptr_nonnull(a);
	ck_assert_int_eq(a->rc, ERR_CLOSED);
	ck_assert_int_eq(admin_job_wait(a, 20), ERR_TIMEOUT);
	admin_job_done(a);
	ck_assert_int_eq(admin_job_wait(a, 20), ERR_TIMEOUT);
	admin_job_done(a);
	ck_assert_int_eq(admin_job_wait(a, 20), 0);
	admin_job_done(a); /* one too many: harmless */
	ck_assert_int_eq(admin_job_wait(a, 0), 0);
	admin_job_release(a);
	admin_job_release(NULL);
}
END_TEST

/* Finishes job after delay_ms, and not before *hold turns true (when
 * hold is set): a test that needs the waiter to give up first says when,
 * rather than trusting a delay that a busy machine can outlast. */
struct finisher {
	struct write_job *job;
	int delay_ms;
	atomic_bool *hold;
};

static void *finish_later(void *arg)
{
	struct finisher *f = arg;

	while (f->hold && !atomic_load(f->hold))
		usleep(1000);
	usleep((useconds_t)f->delay_ms * 1000);
	f->job->admin->rc = 0;
	write_job_free(f->job); /* done + release */
	return NULL;
}

/* A job carried by a write_job is finished when that job is freed, from
 * another thread; the waiter sees its outputs. */
START_TEST(test_admin_job_finished_by_free)
{
	struct admin_job *a = admin_job_new(ADMIN_OP_VACUUM, 1, 0);
	struct finisher f = { calloc(1, sizeof(struct write_job)), 30, NULL };
	pthread_t t;

	admin_job_hold(a);
	f.job->admin = a;
	ck_assert_int_eq(pthread_create(&t, NULL, finish_later, &f), 0);
	ck_assert_int_eq(admin_job_wait(a, 30000), 0); /* a guard: it ends when the job does */
	ck_assert_int_eq(a->rc, 0);
	pthread_join(t, NULL);
	admin_job_release(a);
}
END_TEST

/* The waiter gives up and drops its reference first; the job still
 * carrying the other one frees everything later (LSan and ASan check). */
START_TEST(test_admin_job_abandoned)
{
	struct admin_job *a = admin_job_new(ADMIN_OP_DELETE, 1, 0);
	atomic_bool given_up = false;
	struct finisher f = { calloc(1, sizeof(struct write_job)), 0, &given_up };
	pthread_t t;

	a->filters = make_filters(2);
	a->nfilters = 2;
	admin_job_hold(a);
	f.job->admin = a;
	ck_assert_int_eq(pthread_create(&t, NULL, finish_later, &f), 0);
	ck_assert_int_eq(admin_job_wait(a, 1), ERR_TIMEOUT);
	admin_job_release(a);
	atomic_store(&given_up, true);
	pthread_join(t, NULL);
}
END_TEST

/* An import's results start as "not processed" with the given outcome. */
START_TEST(test_admin_job_import_results)
{
	struct admin_job *a = admin_job_new(ADMIN_OP_IMPORT, 3, 7);

	ck_assert_uint_eq(a->nresults, 3);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_int_eq(a->results[i].outcome, 7);
		ck_assert_str_eq(a->results[i].message, "error: not processed");
	}
	admin_job_release(a);
	a = admin_job_new(ADMIN_OP_IMPORT, 0, 7);
	ck_assert_uint_eq(a->nresults, 0);
	admin_job_release(a);
}
END_TEST

/* A bcast_job carrying a listing finishes it when freed. */
START_TEST(test_admin_job_bcast)
{
	struct admin_job *a = admin_job_new(ADMIN_OP_LIST_SUBS, 1, 0);
	struct bcast_job *job = calloc(1, sizeof(*job));

	job->kind = BCAST_LIST;
	admin_job_hold(a);
	job->admin = a;
	bcast_job_free(job);
	ck_assert_int_eq(admin_job_wait(a, 0), 0);
	admin_job_release(a);
}
END_TEST

/* Copies are deep (the source may go at once), and the listing stops at
 * max_subs or at the byte budget, saying it was truncated. */
START_TEST(test_admin_job_add_sub)
{
	struct admin_job *a = admin_job_new(ADMIN_OP_LIST_SUBS, 1, 0);
	struct filter *fs = make_filters(NFILTER_JSON);

	a->max_subs = 3;
	a->max_sub_bytes = 1 << 20;
	ck_assert_int_eq(admin_job_add_sub(a, 1, 10, "a", 1, 5, fs, NFILTER_JSON), 0);
	ck_assert_int_eq(admin_job_add_sub(a, 2, 20, "b\0c", 3, 6, fs, 1), 0);
	ck_assert_int_eq(admin_job_add_sub(a, 3, 30, "d", 1, 7, NULL, 0), 0);
	filters_free(fs, NFILTER_JSON);
	ck_assert(!a->truncated);
	ck_assert_int_eq(admin_job_add_sub(a, 4, 40, "e", 1, 8, NULL, 0), 1);
	ck_assert(a->truncated);
	ck_assert_uint_eq(a->nsubs, 3);
	ck_assert_uint_eq(a->subs[0].nfilters, NFILTER_JSON);
	ck_assert(a->subs[0].filters[0].has_ids && a->subs[0].filters[0].nids == 2);
	ck_assert_str_eq(a->subs[0].filters[0].search, "hello world");
	ck_assert(a->subs[1].worker == 2 && a->subs[1].conn_id == 20 && a->subs[1].serial == 6);
	ck_assert(a->subs[1].sub_id_len == 3 && memcmp(a->subs[1].sub_id, "b\0c", 3) == 0);
	ck_assert_uint_eq(a->subs[2].nfilters, 0);
	admin_job_release(a);

	/* the byte budget: the first always fits, the next does not */
	a = admin_job_new(ADMIN_OP_LIST_SUBS, 1, 0);
	fs = make_filters(1);
	a->max_subs = 100;
	a->max_sub_bytes = 10;
	ck_assert_int_eq(admin_job_add_sub(a, 1, 1, "a", 1, 1, fs, 1), 0);
	ck_assert_int_eq(admin_job_add_sub(a, 1, 1, "b", 1, 2, fs, 1), 1);
	ck_assert(a->truncated && a->nsubs == 1);
	filters_free(fs, 1);
	admin_job_release(a);
}
END_TEST

/* Many subscriptions: the array grows (capacity doubling) and all are kept. */
START_TEST(test_admin_job_many_subs)
{
	struct admin_job *a = admin_job_new(ADMIN_OP_LIST_SUBS, 1, 0);
	struct filter *fs = make_filters(1);

	a->max_subs = 1000;
	a->max_sub_bytes = 1 << 24;
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_int_eq(admin_job_add_sub(a, 1, i, "s", 1, i, fs, 1), 0);
	ck_assert_uint_eq(a->nsubs, 1000);
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(a->subs[i].serial, i);
	filters_free(fs, 1);
	admin_job_release(a);
}
END_TEST

static Suite *jobs_suite(void)
{
	Suite *s = suite_create("jobs");
	TCase *tc = tcase_create("free");

	tcase_add_test(tc, test_write_job_free);
	tcase_add_test(tc, test_bcast_job_free);
	tcase_add_test(tc, test_query_job_free);
	tcase_add_test(tc, test_filters_free);
	tcase_add_test(tc, test_filters_free_copies);
	tcase_add_test(tc, test_admin_job_wait);
	tcase_add_test(tc, test_admin_job_finished_by_free);
	tcase_add_test(tc, test_admin_job_abandoned);
	tcase_add_test(tc, test_admin_job_import_results);
	tcase_add_test(tc, test_admin_job_bcast);
	tcase_add_test(tc, test_admin_job_add_sub);
	tcase_add_test(tc, test_admin_job_many_subs);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(jobs_suite());
}
