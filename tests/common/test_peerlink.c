/*
 * test_peerlink.c - checks common/peerlink.c: which link URLs pass and why
 * the others fail (plain tcp:// off loopback above all), the port per
 * worker, and a tcp:// and a tls+tcp:// round trip with a listener and a
 * dialer of one process, and TLS refused without its files.
 */
#include <check.h>
#include <nng/nng.h>
#include <nng/protocol/pair0/pair.h>
#include <stdio.h>
#include <string.h>

#include "../../common/err.h"
#include "../../common/peerlink.h"
#include "../support/suite.h"

struct url_case {
	const char *url;
	bool insecure;
	int want;
};

static const struct url_case url_cases[] = {
	{ "ipc:///run/crelay/stored-rpc.ipc", false, 0 },
	{ "tcp://127.0.0.1:7801", false, 0 },
	{ "tcp://127.9.9.9:7801", false, 0 },
	{ "tcp://[::1]:7801", false, 0 },
	{ "tcp://localhost:7801", false, 0 },
	{ "tcp://10.0.0.1:7801", false, ERR_CONFIG },
	{ "tcp://[2001:db8::1]:7801", false, ERR_CONFIG },
	{ "tcp://0.0.0.0:7801", false, ERR_CONFIG },
	{ "tcp://10.0.0.1:7801", true, 0 },
	{ "tls+tcp://10.0.0.1:7801", false, 0 },
	{ "tls+tcp://[2001:db8::1]:7801", false, 0 },
	{ "tls+tcp://stored.example:7801", false, 0 },
	{ "tls+tcp://2001:db8::1:7801", false, ERR_CONFIG }, /* no brackets */
	{ "tls+tcp://[2001:db8::1]7801", false, ERR_CONFIG },
	{ "tls+tcp://10.0.0.1", false, ERR_CONFIG },
	{ "tls+tcp://10.0.0.1:", false, ERR_CONFIG },
	{ "tls+tcp://10.0.0.1:65536", false, ERR_CONFIG },
	{ "tls+tcp://10.0.0.1:78x", false, ERR_CONFIG },
	{ "tls+tcp://:7801", false, ERR_CONFIG },
	{ "ws://10.0.0.1:7801", true, ERR_CONFIG },
	{ "ipc://relative", false, ERR_CONFIG },
	{ "", false, ERR_CONFIG },
};

START_TEST(test_check)
{
	const struct url_case *c = &url_cases[_i];
	char err[256] = "";

	ck_assert_msg(peerlink_check("link_rpc_url", c->url, c->insecure, err, sizeof(err)) == c->want,
		      "%s (insecure %d): %s", c->url, c->insecure, err);
	if (c->want)
		ck_assert_ptr_nonnull(strstr(err, "link_rpc_url"));
}
END_TEST

START_TEST(test_port_plus)
{
	char out[64];

	ck_assert_int_eq(peerlink_port_plus("tls+tcp://10.0.0.1:7900", 3, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "tls+tcp://10.0.0.1:7903");
	ck_assert_int_eq(peerlink_port_plus("tcp://[::1]:7900", 255, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "tcp://[::1]:8155");
	ck_assert_int_eq(peerlink_port_plus("tcp://[::1]:65535", 1, out, sizeof(out)), ERR_CONFIG);
	ck_assert_int_eq(peerlink_port_plus("ipc:///x", 1, out, sizeof(out)), ERR_CONFIG);
	ck_assert_int_eq(peerlink_port_plus("tcp://127.0.0.1:7900", 1, out, 10), ERR_TOOBIG);
}
END_TEST

START_TEST(test_kinds)
{
	ck_assert(peerlink_is_ipc("ipc:///x"));
	ck_assert(!peerlink_is_ipc("tcp://127.0.0.1:1"));
	ck_assert(peerlink_is_tls("tls+tcp://127.0.0.1:1"));
	ck_assert(!peerlink_is_tls("tcp://127.0.0.1:1"));
}
END_TEST

/* Sends one message from a dialer to a listener on host (a free port);
 * returns whether it arrived. */
static bool round_trip(const char *host, const struct peerlink_tls *server,
		       const struct peerlink_tls *client)
{
	nng_socket a, b;
	nng_listener l;
	char url[80], *got = NULL;
	size_t n = 0;
	int port;
	bool ok;

	ck_assert_int_eq(nng_pair0_open(&a), 0);
	ck_assert_int_eq(nng_pair0_open(&b), 0);
	nng_socket_set_ms(b, NNG_OPT_RECVTIMEO, 10000);
	nng_socket_set_ms(a, NNG_OPT_SENDTIMEO, 10000);
	snprintf(url, sizeof(url), "tcp://%s:0", host);
	ck_assert_int_eq(peerlink_listen(b, url, server, &l), 0);
	ck_assert_int_eq(nng_listener_get_int(l, NNG_OPT_TCP_BOUND_PORT, &port), 0);
	snprintf(url, sizeof(url), "tcp://%s:%d", host, port);
	ck_assert_int_eq(peerlink_dial(a, url, client, NULL), 0);
	ok = nng_send(a, "hello", 6, 0) == 0 && nng_recv(b, &got, &n, NNG_FLAG_ALLOC) == 0 &&
	     n == 6 && strcmp(got, "hello") == 0;
	if (got)
		nng_free(got, n);
	nng_close(a);
	nng_close(b);
	return ok;
}

START_TEST(test_tcp_round_trip)
{
	ck_assert(round_trip("127.0.0.1", NULL, NULL));
	ck_assert(round_trip("[::1]", NULL, NULL));
}
END_TEST

START_TEST(test_tls_needs_files)
{
	struct peerlink_tls none = { "", "", "", "" };
	nng_socket s;

	ck_assert_int_eq(nng_pair0_open(&s), 0);
	ck_assert_int_eq(peerlink_listen(s, "tls+tcp://127.0.0.1:47933", &none, NULL), ERR_NNG);
	ck_assert_int_eq(peerlink_listen(s, "tls+tcp://127.0.0.1:47933", NULL, NULL), ERR_NNG);
	ck_assert_int_eq(peerlink_dial(s, "tls+tcp://127.0.0.1:47933", &none, NULL), ERR_NNG);
	nng_close(s);
}
END_TEST

static Suite *peerlink_suite(void)
{
	Suite *s = suite_create("peerlink");
	TCase *tc = tcase_create("peerlink");

	tcase_add_loop_test(tc, test_check, 0, (int)(sizeof(url_cases) / sizeof(url_cases[0])));
	tcase_add_test(tc, test_port_plus);
	tcase_add_test(tc, test_kinds);
	tcase_add_test(tc, test_tcp_round_trip);
	tcase_add_test(tc, test_tls_needs_files);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(peerlink_suite());
}
