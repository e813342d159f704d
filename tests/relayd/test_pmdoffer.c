/*
 * test_pmdoffer.c - checks relayd/pmdoffer.c on Sec-WebSocket-Extensions
 * values as data: the offer chosen (or none) and the answer, for several
 * offers, each RFC 7692 parameter with good and bad values, repeats,
 * unknown parameters, quoting, and the libwebsockets-safe choice.
 */
#include <check.h>
#include <string.h>

#include "../../relayd/pmdoffer.h"
#include "../support/suite.h"

#define BASE "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

struct offer_case {
	const char *hdr;
	int lws_safe;
	int offers;   /* offers counted */
	int chosen;   /* -1: declined */
	const char *answer;
};

static const struct offer_case cases[] = {
	{ "permessage-deflate", 1, 1, 0, BASE },
	{ "permessage-deflate; client_max_window_bits", 1, 1, 0, BASE },
	{ "permessage-deflate; client_max_window_bits=10", 1, 1, 0, BASE },
	{ "permessage-deflate; client_max_window_bits=\"8\"", 1, 1, 0, BASE },
	{ "permessage-deflate; client_max_window_bits=7", 1, 1, -1, "" },
	{ "permessage-deflate; client_max_window_bits=16", 1, 1, -1, "" },
	{ "permessage-deflate; client_max_window_bits=", 1, 1, -1, "" },
	{ "permessage-deflate; server_max_window_bits=15", 1, 1, 0,
	  BASE "; server_max_window_bits=15" },
	{ "permessage-deflate; server_max_window_bits=10", 1, 1, -1, "" },
	{ "permessage-deflate; server_max_window_bits", 1, 1, -1, "" },
	{ "permessage-deflate; server_no_context_takeover; client_no_context_takeover", 1, 1, 0, BASE },
	{ "permessage-deflate; server_no_context_takeover=1", 1, 1, -1, "" },
	{ "permessage-deflate; client_no_context_takeover; client_no_context_takeover", 1, 1, -1, "" },
	{ "permessage-deflate; x_unknown", 1, 1, -1, "" },
	{ "PERMESSAGE-DEFLATE", 1, 0, -1, "" },
	{ "x-webkit-deflate-frame, permessage-deflate; client_max_window_bits", 1, 1, 0, BASE },
	/* The first acceptable offer wins. */
	{ "permessage-deflate; server_max_window_bits=10, permessage-deflate; client_max_window_bits",
	  1, 2, 1, BASE },
	{ "permessage-deflate; server_max_window_bits=9, permessage-deflate; server_max_window_bits=8",
	  1, 2, -1, "" },
	/* Without parameters and followed by another: lws would fail the
	 * handshake, so the next is taken when lws_safe. */
	{ "permessage-deflate, permessage-deflate; client_max_window_bits", 1, 2, 1, BASE },
	{ "permessage-deflate, permessage-deflate; client_max_window_bits", 0, 2, 0, BASE },
	{ "permessage-deflate, permessage-deflate", 1, 2, 1, BASE },
	{ "  permessage-deflate ;client_max_window_bits = 12 ", 1, 1, 0, BASE },
	{ "", 1, 0, -1, "" },
	{ ",,;", 1, 0, -1, "" },
};

START_TEST(offers_as_data)
{
	const struct offer_case *tc = &cases[_i];
	struct pmdoffer_choice out;
	int n = pmdoffer_choose(tc->hdr, strlen(tc->hdr), tc->lws_safe, &out);

	ck_assert_msg(n == tc->offers, "%s: %d offers, not %d", tc->hdr, n, tc->offers);
	ck_assert_msg(out.offer == tc->chosen, "%s: chose %d, not %d", tc->hdr, out.offer,
		      tc->chosen);
	ck_assert_msg(strcmp(out.answer, tc->answer) == 0, "%s: answered '%s'", tc->hdr, out.answer);
}
END_TEST

/* The header is read by its length only: bytes after it do not count. */
START_TEST(length_bounds_the_header)
{
	const char *hdr = "permessage-deflate; x_unknown";
	struct pmdoffer_choice out;

	ck_assert_int_eq(pmdoffer_choose(hdr, strlen("permessage-deflate"), 1, &out), 1);
	ck_assert_int_eq(out.offer, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmdoffer");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, offers_as_data, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, length_bounds_the_header);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
