/*
 * config.c - the configuration table and the parser it drives.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "err.h"
#include "log.h"
#include "retention.h"

enum config_type { CONFIG_STR, CONFIG_U32, CONFIG_I64 };

struct config_key {
	const char *name;
	const char *section;
	enum config_type type;
	size_t offset;
	size_t size; /* for strings: the array size */
	const char *default_value;
	int64_t min, max;
	const char *doc;
};

#define STR(field, sec, def, doc) \
	{ #field, sec, CONFIG_STR, offsetof(struct config, field), \
	  sizeof(((struct config *)0)->field), def, 0, 0, doc }
#define U32(field, sec, def, lo, hi, doc) \
	{ #field, sec, CONFIG_U32, offsetof(struct config, field), 4, def, lo, hi, doc }
#define I64(field, sec, def, lo, hi, doc) \
	{ #field, sec, CONFIG_I64, offsetof(struct config, field), 8, def, lo, hi, doc }

static const struct config_key config_keys[] = {
	STR(bind, "network", "127.0.0.1", "address the workers listen on"),
	U32(port, "network", "7777", 1, 65535, "TCP port shared by all workers (SO_REUSEPORT)"),
	U32(workers, "network", "2", 1, 64, "relayd processes `make run` starts"),
	U32(listen_check_ms, "network", "1000", 0, 60000,
	    "how often stored and each worker check that their nng IPC sockets still take"
	    " connections (nng 1.5.2's listener fault; see the README), 0: never"),
	U32(listen_check_timeout_ms, "network", "1000", 100, 5000,
	    "how long a check waits for the handshake, then for the socket to take the"
	    " connection (a stop waits for a check in progress: up to three times this)"),
	STR(data_dir, "paths", "./var/data", "directory of the SQLite database"),
	STR(run_dir, "paths", "./var/run", "directory of the nng IPC sockets"),
	STR(relay_name, "relay", "crelay", "NIP-11 name"),
	STR(relay_description, "relay", "A Nostr relay written in C", "NIP-11 description"),
	STR(relay_pubkey, "relay", "", "NIP-11 operator pubkey (64 hex), optional"),
	STR(relay_contact, "relay", "", "NIP-11 contact, optional"),
	STR(relay_url, "relay", "",
	    "the relay's public ws:// or wss:// URL (NIP-42, NIP-62); empty: ws://bind:port"),
	U32(max_message_bytes, "limits", "131072", 1024, 16777216, "largest websocket message accepted"),
	U32(max_subscriptions, "limits", "20", 1, 10000, "open subscriptions per connection"),
	U32(max_filters, "limits", "10", 1, 1000, "filters per REQ"),
	U32(max_limit, "limits", "500", 1, 100000, "largest limit honoured; larger ones are clamped"),
	U32(max_subid_length, "limits", "64", 1, 64, "longest subscription id"),
	U32(max_event_tags, "limits", "2000", 1, 100000, "tags per event"),
	U32(max_content_length, "limits", "65536", 1, 16777216,
	    "characters of event content (NIP-11 counts characters; a character is 1-4 bytes,"
	    " and max_message_bytes bounds the whole message)"),
	U32(max_filter_values, "limits", "1000", 1, 100000, "values in one filter list"),
	U32(max_outbound_bytes, "limits", "8388608", 65536, 1073741824,
	    "bytes queued to one slow client before it is dropped"),
	U32(held_deliveries, "limits", "10000", 1, 1000000,
	    "live events one subscription holds while its history is still coming; past it they"
	    " are dropped and sent again from the database once the history is done"),
	U32(max_queued_messages, "limits", "64", 2, 100000,
	    "messages one connection may have waiting for its worker's threads; past it the"
	    " worker stops reading from it until half are handled"),
	U32(max_connections_per_ip, "limits", "500", 0, 1000000,
	    "open connections one address may have on one worker (0: no limit)"),
	U32(events_per_second, "limits", "50", 0, 1000000,
	    "EVENTs per second one address may send to one worker (0: no limit)"),
	U32(events_burst, "limits", "200", 1, 1000000, "EVENTs an address may send at once"),
	U32(reqs_per_second, "limits", "50", 0, 1000000,
	    "REQs and COUNTs per second one address may send to one worker (0: no limit)"),
	U32(reqs_burst, "limits", "200", 1, 1000000, "REQs and COUNTs an address may send at once"),
	U32(rate_limit_strikes, "limits", "100", 1, 1000000,
	    "rate-limited messages after which a connection is closed"),
	U32(limit_loopback, "limits", "0", 0, 1,
	    "1: apply the per-address limits to 127.0.0.0/8 and ::1 too (0: a local proxy is trusted)"),
	I64(created_at_max_future, "limits", "900", 0, 315360000,
	    "seconds an event may be dated ahead of now (0 = no check)"),
	I64(created_at_max_past, "limits", "0", 0, 3153600000,
	    "seconds an event may be dated behind now (0 = no check)"),
	U32(commit_batch, "storage", "1024", 1, 100000, "most events committed in one transaction"),
	U32(query_threads, "storage", "4", 1, 64,
	    "threads in stored that answer REQ histories and COUNTs (more than the cores: the kernel then shares"
	    " the CPU between a heavy query and a cheap one, where a free thread would otherwise be waited for)"),
	U32(query_queue_max, "storage", "16384", 1, 1000000,
	    "REQ histories, replays and COUNTs waiting for a query thread; past it a REQ or COUNT"
	    " gets CLOSED error: the relay is overloaded"),
	U32(query_queue_per_conn, "storage", "256", 1, 1000000,
	    "REQ histories, replays and COUNTs one client connection may have waiting for a query"
	    " thread; past it its REQ or COUNT gets CLOSED rate-limited: (keep it above"
	    " max_subscriptions: a stored restart queues a resume for each subscription)"),
	U32(query_threads_per_conn, "storage", "1", 0, 64,
	    "query threads one client connection's REQ histories and COUNTs may hold at once, so"
	    " that its heavy queries leave a thread to everyone else's (0: no bound)"),
	U32(query_threads_light, "storage", "1", 0, 63,
	    "of the query threads, how many are kept for client connections known to be cheap"
	    " (a REQ history or COUNT of theirs cost less than query_heavy_ms of CPU in the last 10"
	    " s, and none more in the last 60 s); heavy and new connections' queries run on the"
	    " others (0: none kept; at most query_threads - 1 are)"),
	U32(query_heavy_ms, "storage", "10", 1, 600000,
	    "CPU milliseconds one REQ history or COUNT may cost before its connection counts as"
	    " heavy (see query_threads_light)"),
	U32(query_nice, "storage", "5", 0, 19,
	    "nice value of the query threads not kept for cheap connections, which run the heavy"
	    " and new ones' queries (and cheap ones while the kept threads are busy): a cheap REQ"
	    " then gets a core before heavy queries when the CPU is short (0: same priority)"),
	U32(query_turns, "storage", "1", 0, 1,
	    "1: the query threads take each client connection's jobs in turn (0: first come, first"
	    " served, only for the design comparison in bench/RESULTS.md)"),
	U32(query_time_limit_ms, "storage", "3000", 10, 600000,
	    "longest a REQ history or COUNT may run before it is cut with CLOSED error:"),
	STR(db_synchronous, "storage", "full", "SQLite synchronous mode: full or normal"),
	U32(db_cache_mb, "storage", "32", 1, 65536,
	    "page cache of each of stored's SQLite connections, in MiB (it keeps about seven:"
	    " the writer, each query thread, the full-text indexer, checkpoints, metrics, admin)"),
	U32(db_read_map, "storage", "1", 0, 1,
	    "1: stored's readers (the query threads) read relay.db through a memory map each keeps,"
	    " not a copy of every page (0: SQLite's own reads)"),
	U32(db_wal_buffer, "storage", "1", 0, 1,
	    "1: write each commit's WAL pages in a few large writes at the end of the commit"),
	U32(wal_max_mb, "storage", "512", 64, 65536,
	    "MiB of WAL at which the writer checkpoints itself (a stall of the live path) instead"
	    " of leaving it to the checkpoint thread; the WAL file is cut back to this size"),
	U32(writer_nice, "storage", "10", 0, 19,
	    "nice value of stored's writer and checkpoint threads, so the threads that answer"
	    " clients go first when the CPU is short (0: same priority)"),
	U32(search, "storage", "1", 0, 1, "1: keep a full-text index and serve NIP-50 search"),
	U32(search_index_delay_ms, "storage", "1000", 0, 600000,
	    "stored's indexer thread adds new events' text to the search index (search.db, beside"
	    " relay.db) in batches, at most this long after they are stored; a search first waits"
	    " for the events it may find (0: as soon as they are committed)"),
	U32(search_index_batch, "storage", "4096", 1, 1000000,
	    "events whose text is indexed in one transaction, and how many may wait before it runs"),
	U32(expire_interval, "storage", "60", 1, 86400,
	    "seconds between removals of expired events from disk (NIP-40)"),
	STR(retention, "storage", "",
	    "drop old events: KINDS:DAYS rules separated by ';', e.g. 7,6:30;*:3650 (empty: keep all)"),
	U32(verify_threads, "workers", "1", 0, 64,
	    "threads per relayd that parse and verify (0: on the event loop, for comparison only)"),
	U32(express_lane, "workers", "1", 0, 1,
	    "1: each of those threads has a second one for cheap messages (REQ, CLOSE, COUNT),"
	    " so they do not wait for signature checks"),
	U32(inline_request_bytes, "workers", "1024", 0, 65536,
	    "REQ, CLOSE and COUNT messages up to this many bytes, from a connection with nothing"
	    " waiting in its lane, are parsed on the websocket loop itself instead of being handed"
	    " to a lane thread (0: every message goes to a lane)"),
	U32(request_slice_us, "workers", "0", 0, 100000,
	    "scheduler time slice in microseconds asked for by the threads that answer requests"
	    " (relayd's loop, express and receive threads, stored's rpc, broadcast and query"
	    " threads, nng's), so they preempt a flood's work sooner, at some cost to live"
	    " delivery; Linux 6.12 and later (EEVDF), older kernels ignore it (0: the kernel's"
	    " default)"),
	U32(verify_nice, "workers", "5", 0, 19,
	    "nice value of the threads that check signatures, so the express threads and the"
	    " loop go first when the CPU is short (0: same priority)"),
	STR(auth_required, "access", "no",
	    "NIP-42 authentication needed to: no, writes (publish), reads (REQ, COUNT) or all"),
	STR(private_kinds, "access", "",
	    "kinds only their author and p-tagged pubkeys may read, after NIP-42 AUTH (e.g. 4,1059)"),
	U32(min_pow_difficulty, "access", "0", 0, 256,
	    "NIP-13: least leading zero bits an event id must have (0: off)"),
	U32(store_timeout_ms, "workers", "5000", 100, 600000,
	    "how long a worker waits for stored's answer to an EVENT before answering error: itself"),
	U32(answer_timeout_ms, "workers", "60000", 100, 3600000,
	    "how long a worker waits for stored's answer to a COUNT, or the next part of a REQ's"
	    " history, before answering CLOSED error: itself"),
	U32(deliver_queue, "workers", "8192", 16, 1048576,
	    "live deliveries a busy worker may lag behind before some are lost (and counted)"),
	U32(request_backlog, "workers", "4096", 0, 1000000,
	    "clients' requests one worker holds for stored beyond nng's own 1024 while stored is"
	    " slower than they come; past it an EVENT gets OK false error: and a REQ or COUNT CLOSED"
	    " error: (the worker's own messages, such as re-registering subscriptions after a"
	    " stored restart, always wait their turn)"),
	STR(admin_pubkeys, "access", "",
	    "NIP-86 admins: comma-separated hex pubkeys (empty: the management API is off)"),
	U32(metrics_public, "workers", "0", 0, 1,
	    "1: serve /metrics to any client (0: only to loopback, e.g. a local Prometheus)"),
	U32(heap_trim_interval, "memory", "60", 0, 86400,
	    "seconds between handing the heap's freed pages back to the system, in every process,"
	    " so the resident size follows what is in use after a burst (0: never)"),
	STR(log_level, "logging", "info", "error, warn, info or debug"),
};

#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

/* Keys renamed since a release: the old name in a config file still sets
 * the new key, with a warning, so an upgrade does not refuse to start. */
static const struct config_rename {
	const char *old_name, *name, *why;
} config_renames[] = {
	{ "max_content_bytes", "max_content_length",
	  "it counts characters now, as NIP-11 does, not bytes" },
};

static const struct config_key *config_find(const char *name)
{
	for (size_t i = 0; i < CONFIG_NKEYS; i++)
		if (strcmp(config_keys[i].name, name) == 0)
			return &config_keys[i];
	return NULL;
}

static const struct config_key *config_find_renamed(const char *old_name)
{
	for (size_t i = 0; i < sizeof(config_renames) / sizeof(config_renames[0]); i++)
		if (strcmp(config_renames[i].old_name, old_name) == 0) {
			log_warnx("config: '%s' is now '%s' (%s)", old_name, config_renames[i].name,
				  config_renames[i].why);
			return config_find(config_renames[i].name);
		}
	return NULL;
}

static int config_parse_int(const struct config_key *k, const char *value, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(value, &end, 10);
	if (errno || end == value || *end != '\0')
		return ERR_CONFIG;
	if (v < k->min || v > k->max)
		return ERR_CONFIG;
	*out = v;
	return 0;
}

static int config_store(struct config *cfg, const struct config_key *k, const char *value)
{
	char *field = (char *)cfg + k->offset;
	int64_t v;

	if (k->type == CONFIG_STR) {
		if (strlen(value) >= k->size)
			return ERR_CONFIG;
		memcpy(field, value, strlen(value) + 1);
		return 0;
	}
	if (config_parse_int(k, value, &v))
		return ERR_CONFIG;
	if (k->type == CONFIG_U32) {
		uint32_t u = (uint32_t)v;
		memcpy(field, &u, sizeof(u));
	} else {
		memcpy(field, &v, sizeof(v));
	}
	return 0;
}

int config_set(struct config *cfg, const char *key, const char *value, char *err, size_t err_len)
{
	const struct config_key *k = config_find(key);

	if (!k)
		k = config_find_renamed(key);
	if (!k) {
		snprintf(err, err_len, "unknown key '%s'", key);
		return ERR_CONFIG;
	}
	if (config_store(cfg, k, value)) {
		if (k->type == CONFIG_STR)
			snprintf(err, err_len, "value of '%s' is longer than %zu bytes", key, k->size - 1);
		else
			snprintf(err, err_len, "'%s' must be an integer from %lld to %lld, not '%s'", key,
				 (long long)k->min, (long long)k->max, value);
		return ERR_CONFIG;
	}
	return 0;
}

static void config_defaults(struct config *cfg)
{
	char ignored[8];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < CONFIG_NKEYS; i++)
		config_set(cfg, config_keys[i].name, config_keys[i].default_value, ignored, sizeof(ignored));
}

static char *config_trim(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* "" or "4,1059": kinds 0-65535 separated by commas. */
static int config_kind_list_valid(const char *text)
{
	const char *p = text;

	while (*p) {
		char *end;
		unsigned long k = strtoul(p, &end, 10);

		if (end == p || k > 65535 || (*end && *end != ',') || (*end == ',' && !end[1]))
			return 0;
		p = *end ? end + 1 : end;
	}
	return 1;
}

size_t config_kinds(const char *text, uint32_t *out, size_t max)
{
	size_t n = 0;

	for (const char *p = text; *p;) {
		char *end;
		unsigned long k = strtoul(p, &end, 10);

		if (end == p)
			break;
		if (n < max)
			out[n] = (uint32_t)k;
		n++;
		p = *end ? end + 1 : end;
	}
	return n;
}

/* Cross-field checks that one key's bounds cannot express. */
static int config_validate(const struct config *cfg, char *err, size_t err_len)
{
	char url[256];

	if (log_level_parse(cfg->log_level) < 0) {
		snprintf(err, err_len, "log_level must be error, warn, info or debug");
		return ERR_CONFIG;
	}
	if (strcmp(cfg->auth_required, "no") && strcmp(cfg->auth_required, "writes") &&
	    strcmp(cfg->auth_required, "reads") && strcmp(cfg->auth_required, "all")) {
		snprintf(err, err_len, "auth_required must be no, writes, reads or all");
		return ERR_CONFIG;
	}
	{
		struct retention rules;

		if (retention_parse(cfg->retention, &rules, err, err_len))
			return ERR_CONFIG;
	}
	if (!config_kind_list_valid(cfg->private_kinds)) {
		snprintf(err, err_len, "private_kinds must be a comma-separated list of kinds 0-65535");
		return ERR_CONFIG;
	}
	if (strcmp(cfg->db_synchronous, "full") && strcmp(cfg->db_synchronous, "normal")) {
		snprintf(err, err_len, "db_synchronous must be full or normal");
		return ERR_CONFIG;
	}
	if (config_socket_url(cfg, "stored-admin.ipc", url, sizeof(url))) {
		snprintf(err, err_len, "run_dir '%s' is too long for a Unix socket path", cfg->run_dir);
		return ERR_CONFIG;
	}
	return 0;
}

static int config_parse_line(struct config *cfg, char *line, char *err, size_t err_len)
{
	char *hash = strchr(line, '#');
	char *eq, *key, *value;

	if (hash)
		*hash = '\0';
	key = config_trim(line);
	if (*key == '\0')
		return 0;
	eq = strchr(key, '=');
	if (!eq) {
		snprintf(err, err_len, "expected 'key = value'");
		return ERR_CONFIG;
	}
	*eq = '\0';
	value = config_trim(eq + 1);
	return config_set(cfg, config_trim(key), value, err, err_len);
}

int config_load(const char *path, struct config *out, char *err, size_t err_len)
{
	char line[1024], why[400];
	unsigned lineno = 0;
	FILE *f;

	config_defaults(out);
	if (!path)
		return config_validate(out, err, err_len);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return ERR_IO;
	}
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		/* The rest of a line that did not fit would be read as a new
		 * line: a long comment is skipped whole, a long setting refused. */
		if (!strchr(line, '\n') && !feof(f)) {
			if (config_trim(line)[0] != '#') {
				snprintf(err, err_len, "%s:%u: line longer than %zu bytes", path,
					 lineno, sizeof(line) - 2);
				fclose(f);
				return ERR_CONFIG;
			}
			for (int c = fgetc(f); c != EOF && c != '\n'; c = fgetc(f))
				;
			continue;
		}
		if (config_parse_line(out, line, why, sizeof(why))) {
			snprintf(err, err_len, "%s:%u: %s", path, lineno, why);
			fclose(f);
			return ERR_CONFIG;
		}
	}
	fclose(f);
	if (config_validate(out, why, sizeof(why))) {
		snprintf(err, err_len, "%s: %s", path, why);
		return ERR_CONFIG;
	}
	return 0;
}

void config_write_sample(FILE *out)
{
	const char *section = "";

	fprintf(out, "# relay.conf - every key with its default.  Unknown keys are an error.\n");
	for (size_t i = 0; i < CONFIG_NKEYS; i++) {
		const struct config_key *k = &config_keys[i];

		if (strcmp(section, k->section) != 0) {
			section = k->section;
			fprintf(out, "\n# [%s]\n", section);
		}
		if (k->type == CONFIG_STR)
			fprintf(out, "# %s\n%s = %s\n", k->doc, k->name, k->default_value);
		else /* the range an operator may set: out of it the daemons refuse to start */
			fprintf(out, "# %s [%lld..%lld]\n%s = %s\n", k->doc, (long long)k->min,
				(long long)k->max, k->name, k->default_value);
	}
}

int config_socket_url(const struct config *cfg, const char *name, char *url, size_t url_len)
{
	struct sockaddr_un sun;
	int n = snprintf(url, url_len, "ipc://%s/%s", cfg->run_dir, name);

	if (n < 0 || (size_t)n >= url_len || (size_t)n - 6 >= sizeof(sun.sun_path))
		return ERR_TOOBIG;
	return 0;
}

/* Whether key k has the same value in a and b (text up to its NUL). */
static int config_key_same(const struct config_key *k, const struct config *a,
			   const struct config *b)
{
	const char *fa = (const char *)a + k->offset, *fb = (const char *)b + k->offset;

	if (k->type == CONFIG_STR)
		return strcmp(fa, fb) == 0;
	return memcmp(fa, fb, k->size) == 0;
}

/* Walks the table for config_foreach (running NULL: every key) and
 * config_foreach_change. */
static int config_walk(const struct config *running, const struct config *cfg,
		       config_visit_fn fn, void *arg)
{
	for (size_t i = 0; i < CONFIG_NKEYS; i++) {
		const struct config_key *k = &config_keys[i];
		const char *field = (const char *)cfg + k->offset;
		struct config_entry e = { k->name, k->section, k->doc, k->type == CONFIG_STR, NULL, 0 };
		uint32_t u;
		int rc;

		if (running && config_key_same(k, running, cfg))
			continue;
		if (k->type == CONFIG_STR) {
			e.text = field;
		} else if (k->type == CONFIG_U32) {
			memcpy(&u, field, sizeof(u));
			e.number = u;
		} else {
			memcpy(&e.number, field, sizeof(e.number));
		}
		if ((rc = fn(arg, &e)) != 0)
			return rc;
	}
	return 0;
}

int config_foreach(const struct config *cfg, config_visit_fn fn, void *arg)
{
	return config_walk(NULL, cfg, fn, arg);
}

int config_foreach_change(const struct config *running, const struct config *next,
			  config_visit_fn fn, void *arg)
{
	return config_walk(running, next, fn, arg);
}
