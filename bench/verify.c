/*
 * verify.c - `loadgen verify`: what one of relayd's lanes spends on each
 * event of a file, on one core, without a relay: the JSON parse (cJSON),
 * event_parse() (fields, canonical serialization, the id's SHA-256) and
 * the BIP-340 check (sig_verify_event), each timed on its own.
 *
 * The issue puts the ceiling at ~33,000 signature checks per second per
 * core; this measures it on the machine at hand, and the rest of a lane's
 * per-event work beside it.  keys_parsed says how many checks parsed their
 * public key rather than taking it from the verifier's cache.  An event
 * that fails to parse or to verify is counted, not skipped silently: a
 * file made by `loadgen gen` has none.
 */
#include <cjson/cJSON.h>
#include <stdio.h>

#include "../common/event.h"
#include "../common/event_sig.h"
#include "../common/json.h"
#include "clock.h"
#include "cli.h"
#include "cmds.h"
#include "evfile.h"
#include "report.h"

struct verify_totals {
	uint64_t json_ns, parse_ns, sig_ns;
	long events, bad_json, bad_event, bad_sig;
};

/* One event through the lane's three steps, each timed. */
static void verify_one(struct sig_verifier *v, const struct evline *line, struct verify_totals *t)
{
	struct event ev;
	char why[160];
	uint64_t t0 = clock_ns(), t1, t2, t3;
	cJSON *obj = json_parse(line->json, line->len, false);

	t1 = clock_ns();
	t->json_ns += t1 - t0;
	t->events++;
	if (!obj) {
		t->bad_json++;
		return;
	}
	if (event_parse(obj, NULL, &ev, why, sizeof(why))) {
		t->parse_ns += clock_ns() - t1;
		t->bad_event++;
		cJSON_Delete(obj);
		return;
	}
	t2 = clock_ns();
	t->parse_ns += t2 - t1;
	if (sig_verify_event(v, &ev))
		t->bad_sig++;
	t3 = clock_ns();
	t->sig_ns += t3 - t2;
	event_free(&ev);
	cJSON_Delete(obj);
}

/* Microseconds per event of a phase's total. */
static double verify_us(uint64_t ns, long events)
{
	return events ? (double)ns / 1000.0 / (double)events : 0;
}

int cmd_verify(int argc, char **argv)
{
	const char *file = NULL;
	long count = 20000;
	const struct cli_opt opts[] = {
		{ "file", CLI_STR, &file, "JSONL events (loadgen gen)" },
		{ "count", CLI_INT, &count, "events to check (the file's first ones; 0: all)" },
	};
	int rc = cli_parse("Times a lane's per-event work (JSON, event_parse with the id hash, "
			   "BIP-340) on one core.",
			   opts, CLI_COUNT(opts), argc, argv);
	struct verify_totals t = { 0 };
	struct sig_verifier *v;
	struct evfile f = { 0 };
	struct report r;
	unsigned long parses;

	if (rc)
		return rc == 1 ? 0 : 2;
	if (!file || count < 0) {
		fprintf(stderr, "loadgen verify: --file is required and --count must be >= 0\n");
		return 2;
	}
	if (evfile_load(file, &f)) {
		fprintf(stderr, "loadgen verify: cannot load %s\n", file);
		return 1;
	}
	if (!(v = sig_verifier_new())) {
		evfile_free(&f);
		return 1;
	}
	if (count == 0 || (size_t)count > f.count)
		count = (long)f.count;
	for (long i = 0; i < count; i++)
		verify_one(v, &f.lines[i], &t);
	parses = sig_verifier_parses(v);
	sig_verifier_free(v);
	evfile_free(&f);

	double total_us = verify_us(t.json_ns + t.parse_ns + t.sig_ns, t.events);
	double sig_us = verify_us(t.sig_ns, t.events - t.bad_json - t.bad_event);

	printf("verify: %ld events: JSON %.1f us, event_parse and id %.1f us, BIP-340 %.1f us each;"
	       " %.0f signatures/s, %.0f events/s on one core; %lu public keys parsed\n",
	       t.events, verify_us(t.json_ns, t.events), verify_us(t.parse_ns, t.events), sig_us,
	       sig_us > 0 ? 1e6 / sig_us : 0, total_us > 0 ? 1e6 / total_us : 0, parses);
	report_begin(&r, "verify");
	report_int(&r, "events", t.events);
	report_int(&r, "bad_json", t.bad_json);
	report_int(&r, "bad_event", t.bad_event);
	report_int(&r, "bad_sig", t.bad_sig);
	report_num(&r, "json_us", verify_us(t.json_ns, t.events), 2);
	report_num(&r, "parse_us", verify_us(t.parse_ns, t.events), 2);
	report_num(&r, "sig_us", sig_us, 2);
	report_num(&r, "sigs_per_s", sig_us > 0 ? 1e6 / sig_us : 0, 1);
	report_num(&r, "events_per_s", total_us > 0 ? 1e6 / total_us : 0, 1);
	report_int(&r, "keys_parsed", (int64_t)parses);
	report_end(&r);
	return 0;
}
