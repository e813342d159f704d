/*
 * test_jobs.c - checks stored/jobs.c: every free function releases a fully
 * populated job (an event with tags, filters with every list, tags and
 * search), a partly populated one, and NULL.
 *
 * The proof is the sanitizer build (`make SAN=address,undefined unit`):
 * LeakSanitizer fails the test's process if anything is left allocated, and
 * AddressSanitizer fails it on a double or invalid free.  Filters come from
 * filter_parse() so they are allocated exactly as the rpc thread does it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/event.h"
#include "../../common/filter.h"
#include "../../stored/jobs.h"

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

static Suite *jobs_suite(void)
{
	Suite *s = suite_create("jobs");
	TCase *tc = tcase_create("free");

	tcase_add_test(tc, test_write_job_free);
	tcase_add_test(tc, test_bcast_job_free);
	tcase_add_test(tc, test_query_job_free);
	tcase_add_test(tc, test_filters_free);
	tcase_add_test(tc, test_filters_free_copies);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(jobs_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
