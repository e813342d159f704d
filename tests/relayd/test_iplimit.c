/*
 * test_iplimit.c - checks relayd/iplimit.c: the per-address connection
 * count and token buckets, loopback's exemption, and the sweep that
 * forgets idle addresses; in particular across config reloads (a new
 * snapshot given with iplimit_set_config()), which must not leave a count
 * behind (limit_loopback turned off and on again) nor an entry that is
 * never swept (a rate set to 0, a burst raised).
 */
#include <check.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../common/config.h"
#include "../../relayd/iplimit.h"
#include "../support/suite.h"

static struct config *config_with(const char *key, const char *value)
{
	struct config *cfg = calloc(1, sizeof(*cfg));
	char err[256];

	ck_assert_ptr_nonnull(cfg);
	ck_assert_int_eq(config_load(NULL, cfg, err, sizeof(err)), 0);
	if (key)
		ck_assert_int_eq(config_set(cfg, key, value, err, sizeof(err)), 0);
	return cfg;
}

START_TEST(test_connections_per_address)
{
	struct config *cfg = config_with("max_connections_per_ip", "2");
	struct iplimit *t = iplimit_new(cfg);
	bool a, b, c;

	ck_assert(iplimit_connect(t, "192.0.2.1", 0, &a) && a);
	ck_assert(iplimit_connect(t, "192.0.2.1", 0, &b) && b);
	ck_assert(!iplimit_connect(t, "192.0.2.1", 0, &c) && !c);
	ck_assert(iplimit_connect(t, "192.0.2.2", 0, &c) && c); /* another address */
	iplimit_disconnect(t, "192.0.2.1", a);
	ck_assert(iplimit_connect(t, "192.0.2.1", 0, &a) && a);
	/* Loopback is exempt, and not counted. */
	for (int i = 0; i < 5; i++) {
		ck_assert(iplimit_connect(t, "127.0.0.1", 0, &c));
		ck_assert(!c);
	}
	ck_assert_uint_eq(iplimit_count(t), 2);
	iplimit_free(t);
	free(cfg);
}
END_TEST

/* limit_loopback 0 -> 1 -> 0 -> 1 while connections come and go: each
 * disconnect undoes exactly what its connect counted. */
START_TEST(test_loopback_reloads)
{
	struct config *exempt = config_with("max_connections_per_ip", "3");
	struct config *limited = config_with("max_connections_per_ip", "3");
	char err[256];
	struct iplimit *t;
	bool counted[3], c;

	ck_assert_int_eq(config_set(limited, "limit_loopback", "1", err, sizeof(err)), 0);
	t = iplimit_new(limited);
	for (int i = 0; i < 3; i++)
		ck_assert(iplimit_connect(t, "::1", 0, &counted[i]) && counted[i]);
	ck_assert(!iplimit_connect(t, "::1", 0, &c));
	/* Reloaded exempt: the three close; their counts go. */
	iplimit_set_config(t, exempt);
	for (int i = 0; i < 3; i++)
		iplimit_disconnect(t, "::1", counted[i]);
	/* Exempt connections come and go uncounted... */
	for (int i = 0; i < 3; i++)
		ck_assert(iplimit_connect(t, "::1", 0, &counted[i]) && !counted[i]);
	/* ...and close after a reload to limited, taking nothing away. */
	iplimit_set_config(t, limited);
	for (int i = 0; i < 3; i++)
		iplimit_disconnect(t, "::1", counted[i]);
	for (int i = 0; i < 3; i++)
		ck_assert(iplimit_connect(t, "::1", 0, &counted[i]) && counted[i]);
	ck_assert(!iplimit_connect(t, "::1", 0, &c));
	iplimit_free(t);
	free(exempt);
	free(limited);
}
END_TEST

/* An address with nothing open is forgotten once its buckets are full,
 * also after a reload that set a rate to 0 or raised a burst. */
START_TEST(test_sweep_after_reloads)
{
	struct config *cfg = config_with("events_per_second", "10");
	struct config *no_rate = config_with("events_per_second", "0");
	struct config *big_burst = config_with("events_burst", "1000000");
	struct iplimit *t = iplimit_new(cfg);
	bool counted;

	ck_assert(iplimit_connect(t, "192.0.2.9", 0, &counted));
	for (int i = 0; i < 50; i++)
		iplimit_take(t, "192.0.2.9", IPLIMIT_EVENT, 0);
	iplimit_disconnect(t, "192.0.2.9", counted);
	iplimit_sweep(t, 1);
	ck_assert_uint_eq(iplimit_count(t), 1); /* bucket not full yet */
	iplimit_set_config(t, no_rate);
	for (int s = 2; s < 20 && iplimit_count(t); s++)
		iplimit_sweep(t, s * 1000);
	ck_assert_uint_eq(iplimit_count(t), 0);

	iplimit_set_config(t, cfg);
	ck_assert(iplimit_connect(t, "192.0.2.9", 100000, &counted));
	iplimit_take(t, "192.0.2.9", IPLIMIT_EVENT, 100000);
	iplimit_disconnect(t, "192.0.2.9", counted);
	/* A burst raised far beyond what the rate refills in the sweeps here
	 * keeps the entry (its bucket is not full): the rate still applies. */
	iplimit_set_config(t, big_burst);
	for (int s = 1; s <= 10; s++)
		iplimit_sweep(t, 100000 + s * 1000);
	ck_assert_uint_eq(iplimit_count(t), 1);
	/* With that rate and burst it is full after a day at most. */
	iplimit_sweep(t, 100000 + 86400 * 1000LL);
	ck_assert_uint_eq(iplimit_count(t), 0);
	iplimit_free(t);
	free(cfg);
	free(no_rate);
	free(big_burst);
}
END_TEST

static Suite *iplimit_suite(void)
{
	Suite *s = suite_create("iplimit");
	TCase *tc = tcase_create("iplimit");

	tcase_add_test(tc, test_connections_per_address);
	tcase_add_test(tc, test_loopback_reloads);
	tcase_add_test(tc, test_sweep_after_reloads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return suite_run(iplimit_suite());
}
