/*
 * test_realip.c - checks relayd/realip.c: which address of a forwarding
 * header is the client's.  X-Forwarded-For is walked from the right past
 * trusted proxies; garbage stops the walk at the last good address; a
 * header from an untrusted peer is ignored; IPv6 and IPv4-mapped IPv6
 * match IPv4 ranges; several header lines read as one list in order.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/cidr.h"
#include "../../relayd/realip.h"
#include "../support/suite.h"

static const char *const loopback = "127.0.0.0/8 ::1";

/* The address realip_pick() gives, as text. */
static const char *pick(enum realip_header kind, const char *ranges, const char *peer,
			const char *const *lines, size_t nlines)
{
	static char text[CIDR_ADDR_TEXT];
	struct cidr_list trusted;
	uint8_t p[16], out[16];

	ck_assert_int_eq(cidr_list_parse(ranges, &trusted), 0);
	ck_assert_int_eq(cidr_addr_parse(peer, strlen(peer), p), 0);
	realip_pick(kind, lines, nlines, &trusted, p, out);
	cidr_addr_format(out, text, sizeof(text));
	return text;
}

static const char *xff(const char *peer, const char *line)
{
	return pick(REALIP_FORWARDED_FOR, loopback, peer, &line, 1);
}

START_TEST(test_header_names)
{
	ck_assert_int_eq(realip_header_kind(""), REALIP_OFF);
	ck_assert_int_eq(realip_header_kind("X-Forwarded-For"), REALIP_FORWARDED_FOR);
	ck_assert_int_eq(realip_header_kind("x-forwarded-for"), REALIP_FORWARDED_FOR);
	ck_assert_int_eq(realip_header_kind("X-Real-IP"), -1);
	ck_assert_int_eq(realip_header_kind("Forwarded"), -1);
	ck_assert_int_eq(realip_header_kind("CF-Connecting-IP"), -1);
}
END_TEST

/* One X-Forwarded-For line from peer, trusting loopback, and the
 * address it should give. */
struct xff_case {
	const char *peer, *line, *want;
};

static void expect_cases(const struct xff_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(strcmp(xff(cases[i].peer, cases[i].line), cases[i].want) == 0,
			      "'%s' from %s gave %s, not %s", cases[i].line, cases[i].peer,
			      xff(cases[i].peer, cases[i].line), cases[i].want);
}

/* The client wrote the left entries itself: only the right-most untrusted
 * one was added by a trusted proxy.  If every entry is trusted, the
 * left-most is the client.  Empty list elements are allowed (RFC 9110
 * 5.6.1) and skipped. */
START_TEST(test_right_most_untrusted)
{
	static const struct xff_case cases[] = {
		{ "127.0.0.1", "203.0.113.5", "203.0.113.5" },
		{ "127.0.0.1", "1.1.1.1, 2.2.2.2, 203.0.113.5", "203.0.113.5" },
		{ "127.0.0.1", "1.1.1.1,203.0.113.5 ,127.0.0.9", "203.0.113.5" },
		{ "127.0.0.1", "1.1.1.1, 203.0.113.5, ::1, 127.0.0.2", "203.0.113.5" },
		{ "127.0.0.1", "127.0.0.3, 127.0.0.2", "127.0.0.3" },
		{ "127.0.0.1", "203.0.113.5,, ,", "203.0.113.5" },
		{ "127.0.0.1", "", "127.0.0.1" },
	};

	expect_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

START_TEST(test_trusted_ranges)
{
	const char *line = "198.51.100.7, 10.1.2.3, 10.9.9.9";

	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, "10.0.0.0/8", "10.0.0.1", &line, 1),
			 "198.51.100.7");
	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, "10.0.0.0/16", "10.0.0.1", &line, 1),
			 "10.9.9.9");
	/* A peer outside the list: the header is ignored. */
	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, "10.0.0.0/8", "192.0.2.1", &line, 1),
			 "192.0.2.1");
	ck_assert_str_eq(xff("192.0.2.1", "203.0.113.5"), "192.0.2.1");
	ck_assert_str_eq(pick(REALIP_OFF, loopback, "127.0.0.1", &line, 1), "127.0.0.1");
}
END_TEST

/* A dual-stack socket's IPv4 peer is IPv4-mapped, and IPv4 ranges match
 * it; a mapped entry is written back as plain IPv4. */
START_TEST(test_ipv6)
{
	static const struct xff_case cases[] = {
		{ "::1", "2001:db8::1", "2001:db8::1" },
		{ "::1", "2001:db8::1, ::1", "2001:db8::1" },
		{ "::ffff:127.0.0.1", "203.0.113.5", "203.0.113.5" },
		{ "127.0.0.1", "::ffff:203.0.113.5", "203.0.113.5" },
		{ "127.0.0.1", "198.51.100.1, ::ffff:127.0.0.5", "198.51.100.1" },
	};
	const char *line = "2001:db8::77, 2001:db8:1::2";

	expect_cases(cases, sizeof(cases) / sizeof(cases[0]));
	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, "2001:db8:1::/48", "2001:db8:1::1", &line, 1),
			 "2001:db8::77");
	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, "2001:db8:1::/48", "2001:db8:2::1", &line, 1),
			 "2001:db8:2::1");
}
END_TEST

/* Garbage stops the walk at the last good address right of it; left of
 * an untrusted address nothing is read. */
START_TEST(test_garbage)
{
	static const struct xff_case cases[] = {
		{ "127.0.0.1", "203.0.113.5, nonsense", "127.0.0.1" },
		{ "127.0.0.1", "203.0.113.5, nonsense, 127.0.0.2", "127.0.0.2" },
		{ "127.0.0.1", "nonsense, 203.0.113.5", "203.0.113.5" },
		{ "127.0.0.1", "203.0.113.5:443", "127.0.0.1" },
		{ "127.0.0.1", "[2001:db8::1]", "127.0.0.1" },
		{ "127.0.0.1", "1.2.3.4.5", "127.0.0.1" },
		{ "127.0.0.1", "1.2.3 .4", "127.0.0.1" },
		{ "127.0.0.1", "fe80::1%eth0", "127.0.0.1" },
		{ "127.0.0.1", "unknown", "127.0.0.1" },
	};

	expect_cases(cases, sizeof(cases) / sizeof(cases[0]));
}
END_TEST

START_TEST(test_too_long)
{
	size_t n = 100000;
	char *line = malloc(n + 32);

	ck_assert_ptr_nonnull(line);
	/* One entry far longer than any address. */
	memset(line, '1', n);
	strcpy(line + n, ", 127.0.0.2");
	ck_assert_str_eq(xff("127.0.0.1", line), "127.0.0.2");
	/* Thousands of entries: the right-most untrusted still wins. */
	line[0] = '\0';
	for (size_t len = 0; len + 16 < n; len += strlen(line + len))
		strcat(line + len, "10.0.0.1,");
	strcat(line, "203.0.113.9");
	ck_assert_str_eq(xff("127.0.0.1", line), "203.0.113.9");
	free(line);
}
END_TEST

START_TEST(test_several_lines)
{
	/* Lines read as one list in order: the last line is the right end. */
	const char *lines[] = { "1.1.1.1, 198.51.100.1", "203.0.113.5", "127.0.0.2" };
	const char *trusted_tail[] = { "198.51.100.1", "127.0.0.2, ::1", "" };

	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, loopback, "127.0.0.1", lines, 3), "203.0.113.5");
	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, loopback, "127.0.0.1", trusted_tail, 3),
			 "198.51.100.1");
	ck_assert_str_eq(pick(REALIP_FORWARDED_FOR, loopback, "127.0.0.1", NULL, 0), "127.0.0.1");
}
END_TEST

static Suite *realip_suite(void)
{
	Suite *s = suite_create("realip");
	TCase *tc = tcase_create("realip");

	tcase_add_test(tc, test_header_names);
	tcase_add_test(tc, test_right_most_untrusted);
	tcase_add_test(tc, test_trusted_ranges);
	tcase_add_test(tc, test_ipv6);
	tcase_add_test(tc, test_garbage);
	tcase_add_test(tc, test_too_long);
	tcase_add_test(tc, test_several_lines);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(realip_suite());
}
