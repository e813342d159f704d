/*
 * test_err.c - checks common/err.c: every ERR_* code has its stable name,
 * the names are distinct lowercase words, and anything else is "unknown".
 * The expected names are written out from err.h.
 */
#include <check.h>
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../support/suite.h"

static const struct {
	int code;
	const char *name;
} names[] = {
	{ ERR_OK, "ok" },	{ ERR_NOMEM, "nomem" },	      { ERR_INVAL, "inval" },
	{ ERR_TRUNC, "trunc" }, { ERR_TRAILING, "trailing" }, { ERR_VERSION, "version" },
	{ ERR_TYPE, "type" },	{ ERR_TOOBIG, "toobig" },     { ERR_IO, "io" },
	{ ERR_DB, "db" },	{ ERR_NNG, "nng" },	      { ERR_NOTFOUND, "notfound" },
	{ ERR_FULL, "full" },	{ ERR_CLOSED, "closed" },     { ERR_CONFIG, "config" },
	{ ERR_SIG, "sig" },	{ ERR_TIMEOUT, "timeout" },
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

START_TEST(test_names)
{
	for (size_t i = 0; i < NNAMES; i++)
		ck_assert_str_eq(err_name(names[i].code), names[i].name);
}
END_TEST

/* The codes are the fixed numbers 0, -1, -2, ... with no gaps. */
START_TEST(test_codes_dense)
{
	for (size_t i = 0; i < NNAMES; i++)
		ck_assert_int_eq(names[i].code, -(int)i);
}
END_TEST

START_TEST(test_names_distinct_lowercase)
{
	for (int a = 0; a > -(int)NNAMES; a--) {
		const char *name = err_name(a);

		ck_assert_uint_gt(strlen(name), 0);
		for (const char *p = name; *p; p++)
			ck_assert_msg(islower((unsigned char)*p), "'%s' is not lowercase", name);
		for (int b = a - 1; b > -(int)NNAMES; b--)
			ck_assert_str_ne(name, err_name(b));
	}
}
END_TEST

START_TEST(test_unknown)
{
	static const int others[] = { 1, 2, 100, -(int)NNAMES, -100, INT_MAX, INT_MIN + 1 };

	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
		ck_assert_str_eq(err_name(others[i]), "unknown");
}
END_TEST

/*
 * FIXED BUG (err.c, err_name: `int index = -code;`): negating INT_MIN
 * overflows (undefined behaviour; UBSan reports it).  The answer happens to
 * be "unknown" on common hardware.
 */
START_TEST(test_int_min)
{
	ck_assert_str_eq(err_name(INT_MIN), "unknown");
}
END_TEST

static Suite *err_suite(void)
{
	Suite *s = suite_create("err");
	TCase *tc = tcase_create("err");

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_codes_dense);
	tcase_add_test(tc, test_names_distinct_lowercase);
	tcase_add_test(tc, test_unknown);
	tcase_add_test(tc, test_int_min);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(err_suite());
}
