/*
 * test_relayurl.c - checks relayd/relayurl.c, as rows of data:
 *   - relayurl_same: scheme and host case, default ports, trailing
 *     slashes, a trailing dot, and the loopback names are one relay;
 *     another scheme, port, path or host is not, nor is any other name
 *     made equal to the loopback, nor a URL that is not ws:// or wss://;
 *   - relayurl_names_host: a tag against the Host header the client sent,
 *     with and without a port, behind a TLS proxy;
 *   - relayurl_bind_is_wildcard and relayurl_of_bind: a URL a client can
 *     dial for each kind of bind.
 */
#include <check.h>
#include <stdbool.h>

#include "../../relayd/relayurl.h"
#include "../support/suite.h"

struct pair {
	const char *a, *b;
	bool same;
};

static const struct pair same_rows[] = {
	{ "ws://localhost:7777", "ws://127.0.0.1:7777/", true },
	{ "ws://[::1]:7777", "ws://localhost:7777", true },
	{ "WSS://Relay.Example.COM", "wss://relay.example.com/", true },
	{ "wss://relay.example.com:443", "wss://relay.example.com", true },
	{ "ws://relay.example.com:80/", "ws://relay.example.com", true },
	{ "wss://relay.example.com./", "wss://relay.example.com", true },
	{ "wss://relay.example.com/Nostr//", "wss://relay.example.com/nostr", true },
	{ "wss://relay.example.com/?x=1", "wss://relay.example.com", true },
	{ "ws://relay.example.com", "wss://relay.example.com", false },
	{ "wss://relay.example.com:444", "wss://relay.example.com", false },
	{ "wss://relay.example.com/a", "wss://relay.example.com/b", false },
	{ "wss://relay.example.com", "wss://relay.example.org", false },
	{ "ws://0.0.0.0:7777", "ws://localhost:7777", false },
	{ "ws://127.0.0.2:7777", "ws://localhost:7777", false },
	{ "ws://myhost:7777", "ws://localhost:7777", false },
	{ "ws://localhost.evil.example:7777", "ws://localhost:7777", false },
	{ "ws://user@localhost:7777", "ws://localhost:7777", false },
	{ "https://relay.example.com", "wss://relay.example.com", false },
	{ "relay.example.com", "relay.example.com", false },
	{ "ws://:7777", "ws://:7777", false },
	{ "ws://localhost:0", "ws://localhost:0", false },
	{ "ws://localhost:65536", "ws://localhost:65536", false },
	{ "ws://[::1", "ws://[::1", false },
	{ NULL, "ws://localhost", false },
};

START_TEST(same_relay)
{
	const struct pair *p = &same_rows[_i];

	ck_assert_msg(relayurl_same(p->a, p->b) == p->same, "%s vs %s", p->a ? p->a : "NULL", p->b);
	ck_assert_msg(relayurl_same(p->b, p->a) == p->same, "%s vs %s", p->b, p->a ? p->a : "NULL");
}
END_TEST

/* a: the relay tag, b: the Host header. */
static const struct pair host_rows[] = {
	{ "ws://127.0.0.1:7777", "127.0.0.1:7777", true },
	{ "ws://localhost:7777/", "127.0.0.1:7777", true },
	{ "wss://localhost:7777", "[::1]:7777", true },
	{ "wss://Relay.Example.com/", "relay.example.com", true },
	{ "wss://relay.example.com", "relay.example.com:443", true },
	{ "ws://relay.example.com", "Relay.Example.Com", true },
	{ "wss://relay.example.com/nostr", "relay.example.com", true },
	{ "wss://relay.example.com:8443", "relay.example.com:8443", true },
	{ "ws://relay.example.com", "relay.example.com:443", false },
	{ "wss://relay.example.com:8443", "relay.example.com", false },
	{ "wss://evil.example", "relay.example.com", false },
	{ "ws://localhost:7778", "127.0.0.1:7777", false },
	{ "ws://localhost:7777", "0.0.0.0:7777", false },
	{ "ws://localhost:7777", "127.0.0.1:7777/x", false },
	{ "ws://localhost:7777", "", false },
	{ "ws://localhost:7777", NULL, false },
	{ "http://localhost:7777", "127.0.0.1:7777", false },
};

START_TEST(names_host)
{
	const struct pair *p = &host_rows[_i];

	ck_assert_msg(relayurl_names_host(p->a, p->b) == p->same, "%s vs Host %s", p->a,
		      p->b ? p->b : "NULL");
}
END_TEST

START_TEST(url_of_bind)
{
	static const struct {
		const char *bind, *url;
		bool wildcard;
	} rows[] = {
		{ "::", "ws://localhost:18083", true },
		{ "0.0.0.0", "ws://localhost:18083", true },
		{ "[::]", "ws://localhost:18083", true },
		{ "", "ws://localhost:18083", true },
		{ "127.0.0.1", "ws://127.0.0.1:18083", false },
		{ "::1", "ws://[::1]:18083", false },
		{ "2001:db8::7", "ws://[2001:db8::7]:18083", false },
		{ "192.0.2.1", "ws://192.0.2.1:18083", false },
	};
	char out[64];

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		relayurl_of_bind(rows[i].bind, 18083, out, sizeof(out));
		ck_assert_str_eq(out, rows[i].url);
		ck_assert(relayurl_bind_is_wildcard(rows[i].bind) == rows[i].wildcard);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("relayurl");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, same_relay, 0, sizeof(same_rows) / sizeof(same_rows[0]));
	tcase_add_loop_test(tc, names_host, 0, sizeof(host_rows) / sizeof(host_rows[0]));
	tcase_add_test(tc, url_of_bind);
	suite_add_tcase(s, tc);
	return suite_run(s);
}
