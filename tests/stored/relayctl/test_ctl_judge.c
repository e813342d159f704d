/*
 * test_ctl_judge.c - checks stored/relayctl/ctl_judge.c: one line is one
 * JSON object with nothing after it, fields beyond NIP-01's seven are
 * dropped and noted, the signature is checked; and the threads judge a
 * batch exactly as one thread judging each line in turn does.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../../common/event_sig.h"
#include "../../../stored/relayctl/ctl.h"
#include "../../support/splitmix.h"
#include "../../support/suite.h"

/* Two events signed by nostr-tools (as in test_event_sig.c), canonical. */
#define EV_A "{" EV_A_REST
#define EV_A_REST                                                                          \
	"\"id\":\"4a8d3869b3ba49e776655df080c140849c85ab6a3b9e8c386449d4a03fcc01a1\","       \
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","    \
	"\"created_at\":1700000000,\"kind\":1,\"tags\":[],\"content\":\"hello nostr\","        \
	"\"sig\":\"5ed9ef79ee5778a37c9b33870d516fa9b9801b5578907c688653506e9315d456"          \
	"74c466e816e0ddc0bf5a2796fc60cdf77dfbde7b2d72c90d6e6173f6dbf387f6\"}"
#define EV_B_REST_NO_SIG                                                                   \
	"\"id\":\"5d84e4a4661ec81a5a2418d1c491173e00a64a94f808680bae996dbc22d2bd0f\","       \
	"\"pubkey\":\"84bf7562262bbd6940085748f3be6afa52ae317155181ece31b66351ccffa4b0\","    \
	"\"created_at\":0,\"kind\":0,\"tags\":[],\"content\":\"{\\\"name\\\":\\\"alice\\\"}\","
#define EV_B "{" EV_B_REST
#define EV_B_REST EV_B_REST_NO_SIG                                                         \
	"\"sig\":\"06c756c5e82f6f6aabef6785ebde2adbe4062e5eb8393315763225ca1dafffc8"          \
	"a4b44c16ef7f513844bad397299b2519695d385bfed9b2a936dea45838574f3f\"}"
/* B with A's signature: a valid signature, of another event. */
#define EV_B_SIG_OF_A "{" EV_B_REST_NO_SIG                                                          \
	"\"sig\":\"5ed9ef79ee5778a37c9b33870d516fa9b9801b5578907c688653506e9315d456"          \
	"74c466e816e0ddc0bf5a2796fc60cdf77dfbde7b2d72c90d6e6173f6dbf387f6\"}"

static struct sig_verifier *ver;

static void setup(void)
{
	ver = sig_verifier_new();
}

static void teardown(void)
{
	sig_verifier_free(ver);
}

/* Judges text as one line; the caller frees l->ev when CTL_GOOD. */
static void judge(const char *text, struct ctl_line *l)
{
	memset(l, 0, sizeof(*l));
	l->len = strlen(text);
	ctl_judge_line(ver, 131072, text, l);
}

static void expect(const char *text, enum ctl_verdict verdict, const char *why)
{
	struct ctl_line l;

	judge(text, &l);
	ck_assert_msg(l.verdict == verdict, "%s: verdict %d, why %s", text, l.verdict, l.why);
	if (why)
		ck_assert_str_eq(l.why, why);
	if (l.verdict == CTL_GOOD)
		event_free(&l.ev);
}

START_TEST(test_one_event_per_line)
{
	struct ctl_line l;

	judge(EV_A, &l);
	ck_assert_int_eq(l.verdict, CTL_GOOD);
	ck_assert(!l.extra);
	ck_assert_str_eq(l.ev.json, EV_A);
	event_free(&l.ev);
	expect(" \t" EV_B " \r\n", CTL_GOOD, NULL);
	expect("", CTL_BLANK, NULL);
	expect(" \r\n", CTL_BLANK, NULL);
}
END_TEST

START_TEST(test_nothing_after_the_object)
{
	char col[160];

	snprintf(col, sizeof(col), "invalid: bytes after the JSON object, at column %zu",
		 strlen(EV_A) + 2);
	expect(EV_A " x", CTL_INVALID, col);
	snprintf(col, sizeof(col), "invalid: bytes after the JSON object, at column %zu",
		 strlen(EV_A) + 1);
	expect(EV_A ",", CTL_INVALID, col);
	expect(EV_A "]", CTL_INVALID, col);
	snprintf(col, sizeof(col),
		 "invalid: a second JSON value after the JSON object, at column %zu",
		 strlen(EV_A) + 1);
	expect(EV_A EV_B, CTL_INVALID, col);
	expect(EV_A "[]", CTL_INVALID, col);
}
END_TEST

START_TEST(test_not_an_object)
{
	expect("not json", CTL_INVALID, "invalid: not a JSON object (bad JSON at column 1)");
	expect("[1,2]", CTL_INVALID, "invalid: not a JSON object");
	expect("\"text\"", CTL_INVALID, "invalid: not a JSON object");
	expect("{\"id\":", CTL_INVALID, NULL);
}
END_TEST

/* Fields beyond the seven go, wherever they are; the event is as signed. */
START_TEST(test_extra_fields_dropped)
{
	static const char *const lines[] = {
		"{\"seen_on\":[\"wss://a\"]," EV_A_REST,
		"{\"seen_on\":[]," EV_A_REST,
	};
	struct ctl_line l;
	char tail[4096];

	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		judge(lines[i], &l);
		ck_assert_int_eq(l.verdict, CTL_GOOD);
		ck_assert(l.extra);
		ck_assert_str_eq(l.ev.json, EV_A);
		event_free(&l.ev);
	}
	/* at the end, two of them */
	snprintf(tail, sizeof(tail), "%.*s,\"relays\":{},\"_x\":1}", (int)strlen(EV_A) - 1, EV_A);
	judge(tail, &l);
	ck_assert_int_eq(l.verdict, CTL_GOOD);
	ck_assert(l.extra);
	ck_assert_str_eq(l.ev.json, EV_A);
	event_free(&l.ev);
	/* a NIP-01 field twice is still refused */
	snprintf(tail, sizeof(tail), "%.*s,\"kind\":1}", (int)strlen(EV_A) - 1, EV_A);
	expect(tail, CTL_INVALID, NULL);
}
END_TEST

START_TEST(test_signature_checked)
{
	expect(EV_B_SIG_OF_A, CTL_INVALID, "invalid: bad signature");
}
END_TEST

START_TEST(test_too_long)
{
	struct ctl_line l = { .too_long = true };

	ctl_judge_line(ver, 1024, "", &l);
	ck_assert_int_eq(l.verdict, CTL_INVALID);
	ck_assert_str_eq(l.why, "invalid: longer than max_message_bytes (1024)");
}
END_TEST

/* Random batches of good and bad lines: the threads' verdicts are one
 * thread's, line by line. */
START_TEST(test_threads_judge_as_one)
{
	static const char *const kinds[] = {
		EV_A, EV_B, EV_A " x", EV_A EV_B, EV_B_SIG_OF_A, "", "nope", "{\"seen_on\":1," EV_B_REST,
	};
	enum { N = 2000 };
	struct splitmix rng = { .state = 7 };
	struct ctl_line *got = calloc(N, sizeof(*got)), want;
	struct ctl_judges *j = ctl_judges_new(3);
	char *text = malloc(N * 1024);
	size_t off = 0;

	ck_assert_ptr_nonnull(j);
	for (size_t i = 0; i < N; i++) {
		const char *k = kinds[splitmix_below(&rng, sizeof(kinds) / sizeof(kinds[0]))];

		got[i].off = off;
		got[i].len = strlen(k);
		memcpy(text + off, k, got[i].len);
		off += got[i].len;
	}
	ctl_judges_start(j, text, got, N, 131072);
	ctl_judges_wait(j);
	for (size_t i = 0; i < N; i++) {
		memset(&want, 0, sizeof(want));
		want.len = got[i].len;
		ctl_judge_line(ver, 131072, text + got[i].off, &want);
		ck_assert_int_eq(got[i].verdict, want.verdict);
		ck_assert_int_eq(got[i].extra, want.extra);
		if (want.verdict == CTL_GOOD) {
			ck_assert_mem_eq(got[i].ev.id, want.ev.id, EVENT_ID_LEN);
			event_free(&got[i].ev);
			event_free(&want.ev);
		} else {
			ck_assert_str_eq(got[i].why, want.why);
		}
	}
	ctl_judges_free(j);
	free(text);
	free(got);
}
END_TEST

static Suite *judge_suite(void)
{
	Suite *s = suite_create("ctl_judge");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_one_event_per_line);
	tcase_add_test(tc, test_nothing_after_the_object);
	tcase_add_test(tc, test_not_an_object);
	tcase_add_test(tc, test_extra_fields_dropped);
	tcase_add_test(tc, test_signature_checked);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_threads_judge_as_one);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(judge_suite());
}
