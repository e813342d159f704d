/*
 * test_send.c - checks the part of relayd/send.c that needs no
 * libwebsockets connection: once a connection is closing, send_frame()
 * refuses a frame with ERR_FULL, queues nothing and releases the head and
 * the body reference it took, and send_writable() writes nothing.
 *
 * The wsi and the relayd are NULL: a closing connection's paths touch
 * neither.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/err.h"
#include "../../relayd/conn.h"
#include "../../relayd/send.h"
#include "../support/suite.h"

START_TEST(test_nothing_after_closing)
{
	struct conn_table *t = conn_table_new(0);
	struct conn *c = conn_open(t, NULL);
	struct shared *body = shared_new("{}", 2);

	ck_assert_ptr_nonnull(body);
	ck_assert(conn_set_closing(c));
	for (int i = 0; i < 3; i++) {
		body->refs++;
		ck_assert_int_eq(send_frame(NULL, c, strdup("[\"EVENT\",\"s\","), 12, body, ']'),
				 ERR_FULL);
		ck_assert_int_eq(send_frame(NULL, c, strdup("[\"AUTH\",\"x\"]"), 12, NULL, '\0'),
				 ERR_FULL);
	}
	ck_assert_uint_eq(body->refs, 1);
	ck_assert_ptr_null(c->out.first);
	ck_assert_uint_eq(c->out.bytes, 0);
	ck_assert_int_eq(send_writable(NULL, c), -1);
	shared_unref(body);
	conn_close(t, c);
	conn_table_free(t);
}
END_TEST

static Suite *send_suite(void)
{
	Suite *s = suite_create("send");
	TCase *tc = tcase_create("closing");

	tcase_add_test(tc, test_nothing_after_closing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(send_suite());
}
