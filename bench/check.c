/*
 * check.c - `loadgen check`: does the relay still hold what it acknowledged?
 *
 * Reads the ids `loadgen ingest --acked` wrote (every OK true) and the event
 * file they came from, then asks the relay on one connection, one REQ at a
 * time:
 *   - a regular event must come back by id, exactly once;
 *   - a replaceable one (kinds 0, 3, 10000-19999) may have been replaced:
 *     its (pubkey, kind) must hold a version at least as new as the newest
 *     acknowledged (created_at, then the lower id), asked by author;
 *   - ephemeral and addressable events are counted as unchecked.
 * It assumes the file deletes nothing (no kind 5 or 62, no expiration), as
 * `loadgen gen` writes them.  bench/soak runs it after killing a relay
 * process; a REQ closed with "error:" (stored not back yet: "storage is
 * unavailable, retry shortly") is sent again 200 ms later, as a client
 * would, until --timeout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../common/buf.h"
#include "../common/event.h"
#include "../common/json.h"
#include "clock.h"
#include "cli.h"
#include "cmds.h"
#include "evfile.h"
#include "relay_msg.h"
#include "report.h"
#include "../common/ws_client.h"

#define HEX_LEN 64
#define CHECK_PER_REQ 500 /* ids or authors per REQ */

struct check_opts {
	const char *url, *ids, *file;
	double timeout;
};

/* A regular event acknowledged, and how often the relay returned it. */
struct check_id {
	char hex[HEX_LEN + 1];
	unsigned seen;
};

/* A replaceable event's address: the newest version acknowledged, and the
 * version the relay holds (kept: at least as new). */
struct check_addr {
	char pubkey[HEX_LEN + 1];
	long kind;
	long long created_at;
	char id[HEX_LEN + 1];
	bool kept;
};

struct check_run {
	const struct check_opts *o;
	struct check_id *ids;
	size_t nids;
	struct check_addr *addrs;
	size_t naddrs;
	uint64_t unchecked, unknown, closed, retried;
	uint64_t retry_at_ns; /* a REQ closed with "error:" is sent again then */
	char **reqs; /* the filters to ask, in order */
	size_t nreqs, next;
	struct ws_conn *ws;
	bool open, gone, waiting;
};

static int id_cmp(const void *a, const void *b)
{
	return memcmp(a, b, HEX_LEN);
}

/* By pubkey, then kind; the key of a search is a check_addr too. */
static int addr_cmp(const void *a, const void *b)
{
	const struct check_addr *x = a, *y = b;
	int c = memcmp(x->pubkey, y->pubkey, HEX_LEN);

	return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
}

/* The relay's own classification of a kind (common/event.h). */
static enum event_class check_class(const cJSON *kind)
{
	return event_class_of((uint32_t)kind->valuedouble);
}

/* True if (created_at, id) is at least as new as a's acknowledged version. */
static bool addr_newer_or_same(const struct check_addr *a, long long created_at, const char *id)
{
	return created_at > a->created_at ||
	       (created_at == a->created_at && memcmp(id, a->id, HEX_LEN) <= 0);
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 1024;
	q = realloc(p, *cap * size);
	if (!q)
		free(p);
	return q;
}

/* Reads the acknowledged ids (sorted, without repeats). */
static int check_load_acked(const char *path, char (**out)[HEX_LEN + 1], size_t *n)
{
	FILE *f = fopen(path, "r");
	char line[256], (*v)[HEX_LEN + 1] = NULL;
	size_t cap = 0, kept = 0;

	if (!f) {
		perror(path);
		return 1;
	}
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\r\n");

		if (len == 0)
			continue;
		if (len != HEX_LEN || strspn(line, "0123456789abcdef") < HEX_LEN ||
		    !(v = grow(v, &cap, *n, sizeof(*v)))) {
			fprintf(stderr, "loadgen check: %s: not an event id (or no memory): %.*s\n",
				path, (int)len, line);
			free(v);
			fclose(f);
			return 1;
		}
		memcpy(v[*n], line, HEX_LEN);
		v[(*n)++][HEX_LEN] = '\0';
	}
	fclose(f);
	if (*n)
		qsort(v, *n, sizeof(*v), id_cmp);
	for (size_t i = 0; i < *n; i++)
		if (!kept || memcmp(v[kept - 1], v[i], HEX_LEN))
			memmove(v[kept++], v[i], sizeof(*v));
	*n = kept;
	*out = v;
	return 0;
}

/* Files one acknowledged event from the event file under its class. */
static int check_file_event(struct check_run *c, const cJSON *ev, size_t *ids_cap,
			    size_t *addrs_cap)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(ev, "id");
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(ev, "pubkey");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ev, "kind");
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(ev, "created_at");

	if (!cJSON_IsString(id) || !cJSON_IsString(pk) || !cJSON_IsNumber(kind) ||
	    !cJSON_IsNumber(at) || strlen(id->valuestring) != HEX_LEN ||
	    strlen(pk->valuestring) != HEX_LEN)
		return 1;
	if (check_class(kind) == EVENT_REPLACEABLE) {
		struct check_addr a = { .kind = (long)kind->valuedouble,
					.created_at = (long long)at->valuedouble };

		memcpy(a.pubkey, pk->valuestring, HEX_LEN + 1);
		memcpy(a.id, id->valuestring, HEX_LEN + 1);
		if (!(c->addrs = grow(c->addrs, addrs_cap, c->naddrs, sizeof(*c->addrs))))
			return 1;
		c->addrs[c->naddrs++] = a;
	} else if (check_class(kind) != EVENT_REGULAR) { /* ephemeral, addressable */
		c->unchecked++;
	} else {
		if (!(c->ids = grow(c->ids, ids_cap, c->nids, sizeof(*c->ids))))
			return 1;
		memcpy(c->ids[c->nids].hex, id->valuestring, HEX_LEN + 1);
		c->ids[c->nids++].seen = 0;
	}
	return 0;
}

/* One address per (pubkey, kind), holding the newest version acknowledged. */
static void check_merge_addrs(struct check_run *c)
{
	size_t kept = 0;

	if (c->naddrs)
		qsort(c->addrs, c->naddrs, sizeof(*c->addrs), addr_cmp);
	for (size_t i = 0; i < c->naddrs; i++) {
		struct check_addr *a = &c->addrs[i];

		if (kept && addr_cmp(&c->addrs[kept - 1], a) == 0) {
			if (!addr_newer_or_same(&c->addrs[kept - 1], a->created_at, a->id))
				c->addrs[kept - 1] = *a;
		} else {
			c->addrs[kept++] = *a;
		}
	}
	c->naddrs = kept;
}

/* Sorts the acknowledged events of the file into regular ids and
 * addresses.  An acknowledged id missing from the file is an error. */
static int check_load(struct check_run *c)
{
	char (*acked)[HEX_LEN + 1] = NULL;
	size_t nacked, found = 0, ids_cap = 0, addrs_cap = 0;
	struct evfile ev = { 0 };
	int rc = 0;

	if (check_load_acked(c->o->ids, &acked, &nacked))
		return 1;
	if (evfile_load(c->o->file, &ev)) {
		fprintf(stderr, "loadgen check: cannot load %s\n", c->o->file);
		free(acked);
		return 1;
	}
	for (size_t i = 0; !rc && i < ev.count; i++) {
		cJSON *e;

		if (!nacked || !bsearch(ev.lines[i].id, acked, nacked, sizeof(*acked), id_cmp))
			continue;
		found++;
		e = json_parse(ev.lines[i].json, ev.lines[i].len, false);
		rc = !e || check_file_event(c, e, &ids_cap, &addrs_cap);
		cJSON_Delete(e);
	}
	if (!rc && found != nacked) {
		fprintf(stderr, "loadgen check: %zu acknowledged ids are not in %s\n", nacked - found,
			c->o->file);
		rc = 1;
	}
	if (!rc && c->nids)
		qsort(c->ids, c->nids, sizeof(*c->ids), id_cmp);
	check_merge_addrs(c);
	evfile_free(&ev);
	free(acked);
	return rc;
}

static int check_add_req(struct check_run *c, struct buf *filter, size_t *cap)
{
	char *text = buf_take(filter);

	if (!text || !(c->reqs = grow(c->reqs, cap, c->nreqs, sizeof(*c->reqs)))) {
		free(text);
		return 1;
	}
	c->reqs[c->nreqs++] = text;
	return 0;
}

/* A quoted list of hex strings: ids[first..end) or addrs' pubkeys. */
static int append_hex(struct buf *b, const char *hex, bool first)
{
	return (!first && buf_append_byte(b, ',')) || buf_append_byte(b, '"') ||
	       buf_append(b, hex, HEX_LEN) || buf_append_byte(b, '"');
}

/* The filters: the regular ids by CHECK_PER_REQ, then the addresses by
 * kind, CHECK_PER_REQ authors each (addrs are sorted by pubkey, so each
 * REQ's authors are distinct). */
static int check_plan(struct check_run *c)
{
	size_t cap = 0;
	int rc = 0;

	for (size_t i = 0; !rc && i < c->nids; i += CHECK_PER_REQ) {
		struct buf f = BUF_INIT;

		rc = buf_append_str(&f, "{\"ids\":[");
		for (size_t j = i; !rc && j < c->nids && j < i + CHECK_PER_REQ; j++)
			rc = append_hex(&f, c->ids[j].hex, j == i);
		rc = rc || buf_append_str(&f, "]}") || check_add_req(c, &f, &cap);
		buf_free(&f);
	}
	for (size_t i = 0; !rc && i < c->naddrs; i++) {
		long kind = c->addrs[i].kind;
		struct buf f = BUF_INIT;
		size_t n = 0;

		if (c->addrs[i].kept) /* already in an earlier REQ of this kind */
			continue;
		rc = buf_append_str(&f, "{\"kinds\":[") || buf_append_int(&f, kind) ||
		     buf_append_str(&f, "],\"authors\":[");
		for (size_t j = i; !rc && j < c->naddrs && n < CHECK_PER_REQ; j++) {
			if (c->addrs[j].kind != kind || c->addrs[j].kept)
				continue;
			c->addrs[j].kept = true; /* asked; cleared below */
			rc = append_hex(&f, c->addrs[j].pubkey, n++ == 0);
		}
		rc = rc || buf_append_str(&f, "]}") || check_add_req(c, &f, &cap);
		buf_free(&f);
	}
	for (size_t i = 0; i < c->naddrs; i++)
		c->addrs[i].kept = false;
	return rc;
}

/* Counts an EVENT the relay returned. */
static void check_count(struct check_run *c, const char *json, size_t len)
{
	cJSON *ev = json_parse(json, len, false);
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(ev, "id");
	const cJSON *pk = cJSON_GetObjectItemCaseSensitive(ev, "pubkey");
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ev, "kind");
	const cJSON *at = cJSON_GetObjectItemCaseSensitive(ev, "created_at");
	struct check_id *hit = NULL;
	struct check_addr key = { 0 }, *addr = NULL;

	if (!cJSON_IsString(id) || strlen(id->valuestring) != HEX_LEN || !cJSON_IsString(pk) ||
	    strlen(pk->valuestring) != HEX_LEN || !cJSON_IsNumber(kind) || !cJSON_IsNumber(at)) {
		c->unknown++;
		cJSON_Delete(ev);
		return;
	}
	if (check_class(kind) == EVENT_REPLACEABLE) {
		memcpy(key.pubkey, pk->valuestring, HEX_LEN + 1);
		key.kind = (long)kind->valuedouble;
		addr = bsearch(&key, c->addrs, c->naddrs, sizeof(*c->addrs), addr_cmp);
		if (addr && addr_newer_or_same(addr, (long long)at->valuedouble, id->valuestring))
			addr->kept = true;
	} else {
		hit = bsearch(id->valuestring, c->ids, c->nids, sizeof(*c->ids), id_cmp);
		if (hit)
			hit->seen++;
	}
	if (!hit && !addr)
		c->unknown++;
	cJSON_Delete(ev);
}

static int check_send(struct check_run *c)
{
	struct buf req = BUF_INIT;
	int rc = buf_append_str(&req, "[\"REQ\",\"c") || buf_append_int(&req, (int64_t)c->next) ||
		 buf_append_str(&req, "\",") || buf_append_str(&req, c->reqs[c->next]) ||
		 buf_append_byte(&req, ']') || ws_send_text(c->ws, req.data, req.len);

	buf_free(&req);
	c->waiting = rc == 0;
	return rc;
}

static void check_on_message(struct ws_conn *ws, const char *data, size_t len, void *ud)
{
	struct check_run *c = ud;
	struct relay_msg m;
	char sub[24], close[48];
	int n = snprintf(sub, sizeof(sub), "c%zu", c->next);

	(void)ws;
	if (relay_msg_scan(data, len, &m) || !c->waiting || m.arg_len != (size_t)n ||
	    memcmp(m.arg, sub, (size_t)n))
		return;
	if (m.type == RMSG_EVENT) {
		check_count(c, m.text, m.text_len);
		return;
	}
	if (m.type == RMSG_CLOSED && m.text_len >= 6 && !memcmp(m.text, "error:", 6)) {
		c->retried++;
		c->retry_at_ns = clock_ns() + 200 * NS_PER_MS;
		c->waiting = false;
		return;
	}
	if (m.type == RMSG_CLOSED) {
		c->closed++;
		fprintf(stderr, "loadgen check: CLOSED %.*s\n", (int)m.text_len, m.text);
	} else if (m.type == RMSG_EOSE) {
		n = snprintf(close, sizeof(close), "[\"CLOSE\",\"%s\"]", sub);
		ws_send_text(c->ws, close, (size_t)n);
	} else {
		return;
	}
	c->waiting = false;
	c->next++;
}

static void check_on_open(struct ws_conn *ws, void *ud)
{
	(void)ws;
	((struct check_run *)ud)->open = true;
}

static void check_on_close(struct ws_conn *ws, int err, void *ud)
{
	struct check_run *c = ud;

	(void)ws;
	(void)err;
	c->ws = NULL;
	c->gone = true;
}

static const struct ws_handlers check_handlers = { check_on_open, check_on_message,
						   check_on_close };

/* Asks every REQ in turn; false if the run did not get through them. */
static bool check_loop(struct check_run *c, struct ws_loop *loop)
{
	uint64_t end = clock_ns() + (uint64_t)(c->o->timeout * 1e9);

	while (!c->open && !c->gone && clock_ns() < end)
		ws_loop_poll(loop, 10000);
	while (c->open && !c->gone && clock_ns() < end) {
		if (!c->waiting && clock_ns() >= c->retry_at_ns) {
			if (c->next == c->nreqs)
				return true;
			if (check_send(c))
				return false;
		}
		ws_loop_poll(loop, 100000);
	}
	return false;
}

static void check_report(const struct check_run *c, bool complete)
{
	uint64_t present = 0, repeated = 0, kept = 0, shown = 0, missing;
	struct report r;

	for (size_t i = 0; i < c->nids; i++) {
		present += c->ids[i].seen > 0;
		repeated += c->ids[i].seen > 1;
		if (!c->ids[i].seen && shown++ < 5)
			printf("check: missing event %s\n", c->ids[i].hex);
	}
	for (size_t i = 0; i < c->naddrs; i++) {
		kept += c->addrs[i].kept;
		if (!c->addrs[i].kept && shown++ < 5)
			printf("check: no version of kind %ld by %s as new as %s\n", c->addrs[i].kind,
			       c->addrs[i].pubkey, c->addrs[i].id);
	}
	missing = (c->nids - present) + (c->naddrs - kept);
	printf("check: %zu regular events, %llu present (%llu more than once); %zu replaceable "
	       "addresses, %llu kept; %llu unchecked%s\n",
	       c->nids, (unsigned long long)present, (unsigned long long)repeated, c->naddrs,
	       (unsigned long long)kept, (unsigned long long)c->unchecked,
	       complete ? "" : " (run incomplete)");
	report_begin(&r, "check");
	report_int(&r, "regular", (int64_t)c->nids);
	report_int(&r, "present", (int64_t)present);
	report_int(&r, "addresses", (int64_t)c->naddrs);
	report_int(&r, "kept", (int64_t)kept);
	report_int(&r, "missing", (int64_t)missing);
	report_int(&r, "repeated", (int64_t)repeated);
	report_int(&r, "unchecked", (int64_t)c->unchecked);
	report_int(&r, "unknown", (int64_t)c->unknown);
	report_int(&r, "closed", (int64_t)c->closed);
	report_int(&r, "retried", (int64_t)c->retried);
	report_int(&r, "complete", complete);
	report_end(&r);
}

static void check_free(struct check_run *c)
{
	for (size_t i = 0; i < c->nreqs; i++)
		free(c->reqs[i]);
	free(c->reqs);
	free(c->ids);
	free(c->addrs);
}

int cmd_check(int argc, char **argv)
{
	struct check_opts o = { "ws://127.0.0.1:7777", "acked.txt", "events.jsonl", 120 };
	const struct cli_opt opts[] = {
		{ "url", CLI_STR, &o.url, "relay (loopback only)" },
		{ "ids", CLI_STR, &o.ids, "acknowledged event ids, one a line (ingest --acked)" },
		{ "file", CLI_STR, &o.file, "the events they came from (loadgen gen)" },
		{ "timeout", CLI_DOUBLE, &o.timeout, "seconds before giving up" },
	};
	int rc = cli_parse("Checks that the relay still holds every event it acknowledged.", opts,
			   CLI_COUNT(opts), argc, argv);
	struct check_run c = { .o = &o };
	struct ws_loop *loop;
	struct ws_url url;
	bool complete;

	if (rc)
		return rc > 0 ? 0 : 2;
	if (ws_url_parse(o.url, &url) || o.timeout <= 0) {
		fprintf(stderr, "loadgen check: bad --url (loopback only) or --timeout\n");
		return 2;
	}
	if (check_load(&c) || check_plan(&c)) {
		check_free(&c);
		return 1;
	}
	loop = ws_loop_new(64u << 20);
	c.ws = loop ? ws_connect(loop, &url, &check_handlers, &c) : NULL;
	complete = c.ws && check_loop(&c, loop);
	check_report(&c, complete);
	ws_loop_free(loop);
	check_free(&c);
	return complete ? 0 : 1;
}
