/*
 * test_cidr.c - checks common/cidr.c: range lists as trusted_proxies
 * spells them (IPv4, IPv6, prefixes, separators), their limits, and
 * matching, with IPv4-mapped IPv6 inside IPv4 ranges.
 */
#include <check.h>
#include <string.h>

#include "../../common/cidr.h"
#include "../support/suite.h"

START_TEST(test_range_lists)
{
	struct cidr_list l;
	uint8_t a[16];

	ck_assert_int_eq(cidr_list_parse("", &l), 0);
	ck_assert_uint_eq(l.n, 0);
	ck_assert_int_eq(cidr_list_parse(" 10.0.0.0/8, 192.168.1.1 ::1 fd00::/8 0.0.0.0/0 ", &l), 0);
	ck_assert_uint_eq(l.n, 5);
	ck_assert_int_eq(cidr_list_parse("10.0.0.0/33", &l), -1);
	ck_assert_int_eq(cidr_list_parse("::/129", &l), -1);
	ck_assert_int_eq(cidr_list_parse("10.0.0.0/", &l), -1);
	ck_assert_int_eq(cidr_list_parse("10.0.0.0/-1", &l), -1);
	ck_assert_int_eq(cidr_list_parse("10.0.0/8", &l), -1);
	ck_assert_int_eq(cidr_list_parse("localhost", &l), -1);
	ck_assert_int_eq(cidr_list_parse("10.0.0.0/8;", &l), -1);
	ck_assert_int_eq(cidr_list_parse("192.168.0.0/23", &l), 0);
	ck_assert_int_eq(cidr_addr_parse("192.168.1.255", 13, a), 0);
	ck_assert(cidr_list_has(&l, a));
	ck_assert_int_eq(cidr_addr_parse("192.168.2.0", 11, a), 0);
	ck_assert(!cidr_list_has(&l, a));
	ck_assert_int_eq(cidr_addr_parse("::ffff:192.168.0.9", 18, a), 0);
	ck_assert(cidr_list_has(&l, a));
	ck_assert_int_eq(cidr_list_parse("0.0.0.0/0", &l), 0);
	ck_assert_int_eq(cidr_addr_parse("2001:db8::1", 11, a), 0);
	ck_assert(!cidr_list_has(&l, a)); /* IPv4's /0 is not every IPv6 address */
	{
		char many[40 * CIDR_MAX];

		many[0] = '\0';
		for (int i = 0; i <= CIDR_MAX; i++)
			strcat(many, "10.0.0.1 ");
		ck_assert_int_eq(cidr_list_parse(many, &l), -1);
	}
}
END_TEST

START_TEST(test_format)
{
	char text[CIDR_ADDR_TEXT];
	uint8_t a[16];

	ck_assert_int_eq(cidr_addr_parse("::ffff:10.0.0.1", 15, a), 0);
	cidr_addr_format(a, text, sizeof(text));
	ck_assert_str_eq(text, "10.0.0.1");
	ck_assert_int_eq(cidr_addr_parse("2001:DB8:0:0::1", 15, a), 0);
	cidr_addr_format(a, text, sizeof(text));
	ck_assert_str_eq(text, "2001:db8::1");
	ck_assert_int_eq(cidr_addr_parse("10.0.0.1", 0, a), -1);
	ck_assert_int_eq(cidr_addr_parse("10.0.0.1 ", 9, a), -1);
}
END_TEST

static Suite *cidr_suite(void)
{
	Suite *s = suite_create("cidr");
	TCase *tc = tcase_create("cidr");

	tcase_add_test(tc, test_range_lists);
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(cidr_suite());
}
