/*
 * config.c - the configuration table and the parser it drives.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "cidr.h"
#include "err.h"
#include "log.h"
#include "peerlink.h"
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
	enum config_change change;
	const char *doc;
};

#define STR(field, sec, def, change, doc) \
	{ #field, sec, CONFIG_STR, offsetof(struct config, field), \
	  sizeof(((struct config *)0)->field), def, 0, 0, change, doc }
#define U32(field, sec, def, lo, hi, change, doc) \
	{ #field, sec, CONFIG_U32, offsetof(struct config, field), 4, def, lo, hi, change, doc }
#define I64(field, sec, def, lo, hi, change, doc) \
	{ #field, sec, CONFIG_I64, offsetof(struct config, field), 8, def, lo, hi, change, doc }

/* Rows stay grouped by section: the sample file and the README print a
 * section's heading where its first row is. */
static const struct config_key config_keys[] = {
	STR(bind, "network", "127.0.0.1", CONFIG_WORKER,
	    "The IPv4 or IPv6 address the workers listen on."),
	U32(port, "network", "7777", 1, 65535, CONFIG_BOTH,
	    "The TCP port the workers share (SO_REUSEPORT), which stored locks against a second relay."),
	U32(workers, "network", "2", 1, 64, CONFIG_RUN, "How many relayd processes `make run` starts."),
	U32(listen_check_ms, "network", "1000", 0, 60000, CONFIG_BOTH,
	    "How often stored and each worker check that their nng IPC sockets still take"
	    " connections; 0 turns the checks off."),
	U32(listen_check_timeout_ms, "network", "1000", 100, 5000, CONFIG_BOTH,
	    "How long a check waits for the handshake, then for the socket to take the connection."),
	STR(real_ip_header, "network", "", CONFIG_LIVE,
	    "X-Forwarded-For makes the relay know a client by the address a trusted proxy put in that"
	    " header; empty uses the peer address."),
	STR(trusted_proxies, "network", "127.0.0.0/8 ::1", CONFIG_LIVE,
	    "The peers whose real_ip_header is believed, as IPv4 or IPv6 ranges (CIDR) separated by"
	    " spaces; other peers keep their own address."),
	U32(ws_deflate, "network", "1", 0, 1, CONFIG_LIVE,
	    "1 accepts a client's permessage-deflate offer (RFC 7692) without context takeover either"
	    " way; 0 declines it, and the relay sends exactly what it sent before."),
	U32(ws_deflate_min_bytes, "network", "256", 0, 16777216, CONFIG_LIVE,
	    "Messages shorter than this go out uncompressed to a deflate client (OK, EOSE, CLOSED and"
	    " short NOTICEs), since compressing them saves nothing."),
	U32(ws_deflate_level, "network", "1", 1, 9, CONFIG_WORKER,
	    "The zlib level of outgoing compression: 1 is fastest, and on Nostr JSON within 1% of 9's"
	    " size."),
	STR(data_dir, "paths", "./var/data", CONFIG_BOTH,
	    "The directory of the database (relay.db) and of the full-text index (search.db)."),
	STR(run_dir, "paths", "./var/run", CONFIG_BOTH,
	    "The directory of the nng IPC sockets between stored and the workers."),
	STR(socket_group, "paths", "", CONFIG_BOTH,
	    "The group whose members may open those sockets (then mode 0660) and reach run_dir,"
	    " for workers run as another user; empty means only the relay's user (0600)."),
	STR(link_rpc_url, "link", "", CONFIG_BOTH,
	    "The URL stored takes the workers' requests on and they dial: tcp://host:port or"
	    " tls+tcp://host:port (IPv6 in brackets); empty means stored-rpc.ipc in run_dir."),
	STR(link_pub_url, "link", "", CONFIG_BOTH,
	    "The URL of the delivery channel, as link_rpc_url; empty means stored-pub.ipc in"
	    " run_dir."),
	STR(link_reply_url, "link", "", CONFIG_BOTH,
	    "The reply channel's base URL: stored listens, and worker N dials, its port plus N;"
	    " empty means stored dials each worker's socket in run_dir."),
	STR(link_tls_ca_file, "link", "", CONFIG_BOTH,
	    "The PEM CA file that must have signed the peer's certificate on a tls+tcp:// link."),
	STR(link_tls_cert_file, "link", "", CONFIG_BOTH,
	    "This process's own PEM certificate on a tls+tcp:// link."),
	STR(link_tls_key_file, "link", "", CONFIG_BOTH,
	    "The PEM private key of link_tls_cert_file."),
	STR(link_tls_server_name, "link", "", CONFIG_WORKER,
	    "The name a worker expects in stored's certificate; empty takes the host of"
	    " link_rpc_url."),
	U32(link_insecure, "link", "0", 0, 1, CONFIG_BOTH,
	    "1 allows plain tcp:// links off loopback, unencrypted and open to anyone who reaches"
	    " the port."),
	U32(link_timeout_ms, "link", "3000", 0, 600000, CONFIG_WORKER,
	    "A worker counts a tcp link as down, fails what waits on it and dials again when stored"
	    " sent nothing for this long (it sends every second); 0 never."),
	STR(relay_name, "relay", "crelay", CONFIG_LIVE, "The NIP-11 name."),
	STR(relay_description, "relay", "A Nostr relay written in C", CONFIG_LIVE,
	    "The NIP-11 description."),
	STR(relay_pubkey, "relay", "", CONFIG_LIVE,
	    "The NIP-11 operator pubkey (64 hex), left out of the document while empty."),
	STR(relay_contact, "relay", "", CONFIG_LIVE,
	    "The NIP-11 contact, left out of the document while empty."),
	STR(relay_url, "relay", "", CONFIG_STORED,
	    "The relay's public ws:// or wss:// URL, which NIP-42 AUTH and NIP-62 requests must"
	    " name; empty means ws://bind:port (localhost for a wildcard bind), and AUTH may also name"
	    " the host the client dialled."),
	STR(relay_software, "relay", "https://github.com/crelay/crelay", CONFIG_LIVE,
	    "The NIP-11 software: the URL of the relay software's homepage or repository."),
	STR(relay_icon, "relay", "", CONFIG_LIVE,
	    "The NIP-11 icon URL, left out while empty; NIP-86 changerelayicon overrides it."),
	STR(relay_banner, "relay", "", CONFIG_LIVE,
	    "The NIP-11 banner image URL, left out of the document while empty."),
	STR(relay_privacy_policy, "relay", "", CONFIG_LIVE,
	    "The NIP-11 privacy_policy URL, left out of the document while empty."),
	STR(relay_terms_of_service, "relay", "", CONFIG_LIVE,
	    "The NIP-11 terms_of_service URL, left out of the document while empty."),
	STR(relay_self, "relay", "", CONFIG_LIVE,
	    "The NIP-11 self: the relay's own pubkey (64 hex), left out of the document while"
	    " empty."),
	U32(max_message_bytes, "limits", "131072", 1024, 16777216, CONFIG_BOTH,
	    "The largest websocket message a client may send, in bytes."),
	U32(max_subscriptions, "limits", "20", 1, 10000, CONFIG_LIVE,
	    "The most open subscriptions one connection may have."),
	U32(max_filters, "limits", "10", 1, 1000, CONFIG_LIVE,
	    "The most filters one REQ or COUNT may hold."),
	U32(max_limit, "limits", "500", 1, 100000, CONFIG_STORED_FIRST,
	    "The largest limit honoured, and the limit of a filter without one; a larger one is"
	    " clamped."),
	U32(max_subid_length, "limits", "64", 1, 64, CONFIG_LIVE,
	    "The longest subscription id, in characters."),
	U32(max_event_tags, "limits", "2000", 1, 100000, CONFIG_LIVE,
	    "The most tags one event may have."),
	U32(max_content_length, "limits", "65536", 1, 16777216, CONFIG_LIVE,
	    "The most characters (UTF-8 code points) of an event's content, as NIP-11 counts them."),
	U32(max_filter_values, "limits", "1000", 1, 100000, CONFIG_LIVE,
	    "The most values in one list of a filter."),
	U32(max_outbound_bytes, "limits", "8388608", 65536, 1073741824, CONFIG_LIVE,
	    "The bytes of replies and deliveries queued to one client and not yet sent; past it the"
	    " client is dropped."),
	U32(held_deliveries, "limits", "10000", 1, 1000000, CONFIG_LIVE,
	    "The live events one subscription holds while its history is coming; past it they are"
	    " dropped and sent from the database after the history."),
	U32(lane_depth, "limits", "4096", 1, 1000000, CONFIG_WORKER,
	    "The messages one worker's lane of threads holds; past it a connection with nothing"
	    " queued gets rate-limited: answers, and one with messages queued is paused."),
	U32(max_queued_messages, "limits", "64", 2, 100000, CONFIG_WORKER,
	    "The messages one connection may have waiting for its worker's threads; past it the"
	    " worker stops reading from it until half are handled."),
	U32(max_connections_per_ip, "limits", "500", 0, 1000000, CONFIG_LIVE,
	    "The open connections one address may have on one worker; 0 means no limit."),
	U32(events_per_second, "limits", "50", 0, 1000000, CONFIG_LIVE,
	    "The EVENTs per second one address may send to one worker; 0 means no limit."),
	U32(events_burst, "limits", "200", 1, 1000000, CONFIG_LIVE,
	    "The EVENTs one address may send at once."),
	U32(reqs_per_second, "limits", "50", 0, 1000000, CONFIG_LIVE,
	    "The REQs and COUNTs per second one address may send to one worker; 0 means no limit."),
	U32(reqs_burst, "limits", "200", 1, 1000000, CONFIG_LIVE,
	    "The REQs and COUNTs one address may send at once."),
	U32(rate_limit_strikes, "limits", "100", 1, 1000000, CONFIG_LIVE,
	    "The rate-limited messages after which a connection is closed."),
	U32(ping_interval, "limits", "45", 0, 3600, CONFIG_LIVE,
	    "The idle seconds after which a connection is pinged; one silent for another interval"
	    " is closed; 0 turns pings off."),
	U32(limit_loopback, "limits", "0", 0, 1, CONFIG_LIVE,
	    "1 applies the per-address limits to 127.0.0.0/8 and ::1 too; 0 trusts a local proxy."),
	I64(created_at_max_future, "limits", "900", 0, 315360000, CONFIG_LIVE,
	    "The seconds an event may be dated ahead of now; 0 turns the check off."),
	I64(created_at_max_past, "limits", "0", 0, 3153600000, CONFIG_LIVE,
	    "The seconds an event may be dated behind now; 0 turns the check off."),
	U32(commit_batch, "storage", "1024", 1, 100000, CONFIG_STORED,
	    "The most events the writer commits in one transaction."),
	U32(query_threads, "storage", "4", 1, 64, CONFIG_STORED,
	    "The threads in stored that answer REQ histories and COUNTs."),
	U32(query_queue_max, "storage", "16384", 1, 1000000, CONFIG_STORED,
	    "The REQ histories, replays and COUNTs that may wait for a query thread; past it a REQ"
	    " or COUNT gets CLOSED error:."),
	U32(query_queue_per_conn, "storage", "256", 1, 1000000, CONFIG_STORED,
	    "The REQ histories, replays and COUNTs one connection may have waiting for a query"
	    " thread; past it its REQ or COUNT gets CLOSED rate-limited:."),
	U32(query_threads_per_conn, "storage", "1", 0, 64, CONFIG_STORED,
	    "The query threads one connection's REQ histories and COUNTs may hold at once; 0 means"
	    " no bound."),
	U32(query_threads_light, "storage", "1", 0, 63, CONFIG_STORED,
	    "The query threads kept for connections whose queries are known to cost less than"
	    " query_heavy_ms; 0 keeps none, and at most query_threads - 1 are kept."),
	U32(query_heavy_ms, "storage", "10", 1, 600000, CONFIG_STORED,
	    "The CPU milliseconds one REQ history or COUNT may cost before its connection counts as"
	    " heavy."),
	U32(query_nice, "storage", "5", 0, 19, CONFIG_STORED,
	    "The nice value of the query threads not kept for cheap connections; 0 is the same"
	    " priority as the rest."),
	U32(query_turns, "storage", "1", 0, 1, CONFIG_STORED,
	    "1 makes the query threads take each connection's jobs in turn; 0 serves them first"
	    " come, first served, for the design comparison only."),
	U32(query_time_limit_ms, "storage", "3000", 10, 600000, CONFIG_STORED,
	    "The longest a REQ history or COUNT may run before it is cut with CLOSED error:."),
	STR(db_synchronous, "storage", "full", CONFIG_STORED,
	    "SQLite's synchronous mode: full or normal."),
	U32(db_cache_mb, "storage", "32", 1, 65536, CONFIG_STORED,
	    "The page cache of each of stored's SQLite connections, in MiB."),
	U32(db_read_map, "storage", "1", 0, 1, CONFIG_STORED,
	    "1 makes the query threads read relay.db through a memory map each keeps; 0 leaves the"
	    " reads to SQLite."),
	U32(db_wal_buffer, "storage", "1", 0, 1, CONFIG_STORED,
	    "1 makes the writer write each commit's WAL pages in a few large writes at its end; 0"
	    " writes them SQLite's way."),
	U32(wal_max_mb, "storage", "64", 64, 65536, CONFIG_STORED,
	    "The MiB of WAL at which the writer checkpoints itself, and to which the WAL file is"
	    " cut back."),
	U32(disk_reserve_mb, "storage", "256", 0, 1048576, CONFIG_STORED,
	    "The MiB kept free on the data directory's file system: below it new events are refused"
	    " (at least 1% of it, at most a quarter); 0 turns it off."),
	U32(writer_nice, "storage", "10", 0, 19, CONFIG_STORED,
	    "The nice value of stored's writer and checkpoint threads; 0 is the same priority as"
	    " the rest."),
	U32(search, "storage", "1", 0, 1, CONFIG_STORED_FIRST,
	    "1 keeps a full-text index (search.db) and serves NIP-50 search; 0 serves none and"
	    " removes search.db at start."),
	U32(search_index_delay_ms, "storage", "1000", 0, 600000, CONFIG_STORED,
	    "How long a stored event's text may wait to be indexed; 0 indexes it once it is"
	    " committed."),
	U32(search_index_batch, "storage", "4096", 1, 1000000, CONFIG_STORED,
	    "The events whose text is indexed in one transaction, and how many waiting start one"
	    " at once."),
	U32(expire_interval, "storage", "60", 1, 86400, CONFIG_STORED,
	    "The seconds between removals of expired events (NIP-40) from disk."),
	STR(retention, "storage", "", CONFIG_STORED,
	    "Rules that drop old events, KINDS:DAYS separated by ';' (e.g. 7,6:30;*:3650); empty"
	    " keeps every event."),
	U32(verify_threads, "workers", "1", 0, 64, CONFIG_WORKER,
	    "The threads in each worker that parse messages and check signatures; 0 does it on the"
	    " service thread, for the design comparison only."),
	U32(express_lane, "workers", "1", 0, 1, CONFIG_WORKER,
	    "1 gives each of those threads a second one for cheap messages (REQ, CLOSE, COUNT); 0"
	    " is for the design comparison only."),
	U32(inline_request_bytes, "workers", "1024", 0, 65536, CONFIG_LIVE,
	    "The largest REQ, CLOSE or COUNT the service thread parses itself when its connection"
	    " has nothing waiting in its lane; 0 sends every message to a lane."),
	U32(request_slice_us, "workers", "0", 0, 100000, CONFIG_BOTH,
	    "The scheduler time slice in microseconds that the threads answering requests ask for"
	    " (Linux 6.12 and later); 0 keeps the kernel's default."),
	U32(verify_nice, "workers", "5", 0, 19, CONFIG_WORKER,
	    "The nice value of the threads that check signatures; 0 is the same priority as the"
	    " rest."),
	U32(store_timeout_ms, "workers", "5000", 100, 600000, CONFIG_LIVE,
	    "How long a worker waits for stored's answer to an EVENT before answering OK false"
	    " error: itself."),
	U32(answer_timeout_ms, "workers", "60000", 100, 3600000, CONFIG_LIVE,
	    "How long a worker waits for stored's answer to a COUNT, or the next part of a REQ's"
	    " history, before answering CLOSED error: itself."),
	U32(deliver_queue, "workers", "8192", 16, 1048576, CONFIG_WORKER,
	    "The live deliveries a busy worker may lag behind before some are lost and counted."),
	U32(request_backlog, "workers", "4096", 0, 1000000, CONFIG_LIVE,
	    "The clients' requests one worker holds beyond nng's own 1024 while stored is slow;"
	    " past it an EVENT gets OK false error: and a REQ or COUNT CLOSED error:."),
	U32(metrics_public, "workers", "0", 0, 1, CONFIG_LIVE,
	    "1 serves /metrics to any client; 0 serves it to loopback clients only."),
	U32(conns_list_max, "workers", "10000", 1, 1000000, CONFIG_STORED,
	    "The most connections `relayctl conns` lists; past it the list says it is truncated."),
	U32(conns_timeout_ms, "workers", "2000", 100, 60000, CONFIG_STORED,
	    "How long `relayctl conns` and `kick` wait for each worker's answer; one that has not"
	    " answered by then is named in the reply."),
	STR(auth_required, "access", "no", CONFIG_LIVE,
	    "What needs NIP-42 authentication: no, writes (publishing), reads (REQ, COUNT) or all."),
	STR(auth_challenge, "access", "when_needed", CONFIG_LIVE,
	    "When a connection gets its NIP-42 challenge: connect (at once) or when_needed (just"
	    " before the first auth-required: answer)."),
	STR(private_kinds, "access", "4,1059", CONFIG_STORED,
	    "The kinds only their author and p-tagged pubkeys may read, after NIP-42 AUTH; empty"
	    " makes every kind public."),
	U32(min_pow_difficulty, "access", "0", 0, 256, CONFIG_LIVE,
	    "The NIP-13 leading zero bits an event id must have; 0 turns the check off."),
	STR(admin_pubkeys, "access", "", CONFIG_LIVE,
	    "The NIP-86 admins as comma-separated hex pubkeys; empty turns the management API off."),
	STR(plugin, "access", "", CONFIG_STORED,
	    "The write-policy program (strfry's plugin format) every new event is put to; empty"
	    " stores events without asking."),
	U32(plugin_timeout_ms, "access", "2000", 10, 600000, CONFIG_STORED,
	    "How long an event waits for the plugin's answer; past it the event is refused error:"
	    " (or accepted, with plugin_fail_open) and the plugin restarted."),
	U32(plugin_queue, "access", "4096", 1, 65536, CONFIG_STORED,
	    "The most events waiting for the plugin; one more is refused rate-limited: at once."),
	U32(plugin_fail_open, "access", "0", 0, 1, CONFIG_STORED,
	    "1 stores events the plugin failed to judge (timeout, crash, garbage); 0 refuses them"
	    " error:."),
	U32(negentropy, "sync", "1", 0, 1, CONFIG_LIVE,
	    "1 serves NIP-77 negentropy sync (NEG-OPEN) and lists 77 in NIP-11; 0 answers NEG-OPEN"
	    " with NEG-ERR blocked:."),
	U32(neg_sessions_per_conn, "sync", "4", 1, 1000, CONFIG_STORED,
	    "The negentropy sessions one connection may hold open; one more gets NEG-ERR blocked:."),
	U32(neg_sessions_max, "sync", "16", 1, 100000, CONFIG_STORED,
	    "The negentropy sessions the relay holds open at once, each up to 40 bytes per record;"
	    " one more gets NEG-ERR blocked:."),
	U32(neg_max_records, "sync", "1000000", 1, 100000000, CONFIG_STORED,
	    "The most events one negentropy session may cover; a filter that matches more gets"
	    " NEG-ERR blocked:."),
	U32(neg_idle_seconds, "sync", "60", 1, 86400, CONFIG_STORED,
	    "How long a negentropy session may wait for the client's next message before it is"
	    " ended with NEG-ERR closed:."),
	U32(neg_read_ms, "sync", "30000", 10, 600000, CONFIG_STORED,
	    "The longest a query thread may read one negentropy session's events before NEG-ERR"
	    " error: instead of query_time_limit_ms, since a session reads every match."),
	U32(neg_frame_bytes, "sync", "60000", 4096, 524288, CONFIG_BOTH,
	    "The largest negentropy message in bytes (before hex) the relay sends or takes; a"
	    " larger NEG-MSG gets NEG-ERR blocked:."),
	U32(heap_trim_interval, "memory", "60", 0, 86400, CONFIG_STORED,
	    "The seconds between handing each process's freed heap pages back to the system; 0"
	    " never does."),
	STR(log_level, "logging", "info", CONFIG_LIVE_ALL,
	    "The least severe messages logged: error, warn, info or debug."),
	STR(log_format, "logging", "text", CONFIG_LIVE_ALL,
	    "How each log line is written: text (with its UTC time in front unless stderr is the"
	    " journal) or json (one object per line, for log shippers)."),
};

#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

/* Each "change needs" value: its label in the docs, and what it means. */
static const struct config_change_doc {
	const char *label, *meaning;
} config_changes[] = {
	[CONFIG_LIVE] = { "reload", "A reload (SIGHUP: systemctl reload, relayctl reload) applies it"
				    " in every process that uses it." },
	[CONFIG_LIVE_ALL] = { "reload", NULL }, /* the same to an operator */
	[CONFIG_WORKER] = { "worker restart", "Each worker reads it at start and keeps its running"
					      " value on reload." },
	[CONFIG_STORED] = { "stored restart", "stored reads it at start; a worker that uses it"
					      " applies it on reload." },
	[CONFIG_BOTH] = { "stored and worker restart", "stored and each worker read it at start." },
	[CONFIG_STORED_FIRST] = { "stored, then worker restart",
				  "stored reads it at start, and the workers keep showing stored's"
				  " value (NIP-11) until they restart after it." },
	[CONFIG_RUN] = { "`make run` restart", "Only `make run` reads it; under systemd each"
					       " relayd@N unit is one worker." },
};

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

static bool config_is_hex64(const char *s)
{
	return strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
}

/* real_ip_header names the one header relayd/realip.c reads; any other
 * name would be a typo that silently turns the feature off. */
static int config_proxy_validate(const struct config *cfg, char *err, size_t err_len)
{
	struct cidr_list ranges;

	if (cfg->real_ip_header[0] && strcasecmp(cfg->real_ip_header, "X-Forwarded-For")) {
		snprintf(err, err_len, "real_ip_header must be empty or X-Forwarded-For");
		return ERR_CONFIG;
	}
	if (cidr_list_parse(cfg->trusted_proxies, &ranges)) {
		snprintf(err, err_len, "trusted_proxies must be at most %d IPv4 or IPv6 ranges"
			 " (address or address/bits)", CIDR_MAX);
		return ERR_CONFIG;
	}
	return 0;
}

/* The [access] keys, and the relay's own pubkey. */
static int config_access_validate(const struct config *cfg, char *err, size_t err_len)
{
	if (strcmp(cfg->auth_required, "no") && strcmp(cfg->auth_required, "writes") &&
	    strcmp(cfg->auth_required, "reads") && strcmp(cfg->auth_required, "all")) {
		snprintf(err, err_len, "auth_required must be no, writes, reads or all");
		return ERR_CONFIG;
	}
	if (strcmp(cfg->auth_challenge, "connect") && strcmp(cfg->auth_challenge, "when_needed")) {
		snprintf(err, err_len, "auth_challenge must be connect or when_needed");
		return ERR_CONFIG;
	}
	if (cfg->relay_self[0] && !config_is_hex64(cfg->relay_self)) {
		snprintf(err, err_len, "relay_self must be empty or a pubkey of 64 lowercase hex digits");
		return ERR_CONFIG;
	}
	if (!config_kind_list_valid(cfg->private_kinds)) {
		snprintf(err, err_len, "private_kinds must be a comma-separated list of kinds 0-65535");
		return ERR_CONFIG;
	}
	return 0;
}

/* Cross-field checks that one key's bounds cannot express. */
/* Whether the [link] files a tls+tcp:// URL needs are all set. */
static int config_link_tls_set(const struct config *cfg)
{
	return cfg->link_tls_ca_file[0] && cfg->link_tls_cert_file[0] && cfg->link_tls_key_file[0];
}

/* The [link] URLs: each empty or a valid one (peerlink_check()); a remote
 * request or delivery channel needs a reply URL (stored cannot dial a
 * worker's ipc socket on another host); tls+tcp:// needs the three files. */
static int config_link_validate(const struct config *cfg, char *err, size_t err_len)
{
	const char *keys[] = { "link_rpc_url", "link_pub_url", "link_reply_url" };
	const char *urls[] = { cfg->link_rpc_url, cfg->link_pub_url, cfg->link_reply_url };
	bool remote = false;

	for (int i = 0; i < 3; i++) {
		if (!urls[i][0])
			continue;
		if (peerlink_check(keys[i], urls[i], cfg->link_insecure != 0, err, err_len))
			return ERR_CONFIG;
		if (peerlink_is_tls(urls[i]) && !config_link_tls_set(cfg)) {
			snprintf(err, err_len, "%s is tls+tcp://: set link_tls_ca_file, link_tls_cert_file"
				 " and link_tls_key_file", keys[i]);
			return ERR_CONFIG;
		}
		remote |= i < 2 && !peerlink_is_ipc(urls[i]);
	}
	if (cfg->link_reply_url[0] && peerlink_is_ipc(cfg->link_reply_url)) {
		snprintf(err, err_len, "link_reply_url must be tcp:// or tls+tcp:// (empty: ipc in"
			 " run_dir)");
		return ERR_CONFIG;
	}
	if (remote && !cfg->link_reply_url[0]) {
		snprintf(err, err_len, "link_rpc_url or link_pub_url is not ipc://: set link_reply_url"
			 " too");
		return ERR_CONFIG;
	}
	return 0;
}

static int config_validate(const struct config *cfg, char *err, size_t err_len)
{
	char url[256];

	if (log_level_parse(cfg->log_level) < 0) {
		snprintf(err, err_len, "log_level must be error, warn, info or debug");
		return ERR_CONFIG;
	}
	if (log_format_parse(cfg->log_format) < 0) {
		snprintf(err, err_len, "log_format must be text or json");
		return ERR_CONFIG;
	}
	if (config_access_validate(cfg, err, err_len))
		return ERR_CONFIG;
	{
		struct retention rules;

		if (retention_parse(cfg->retention, &rules, err, err_len))
			return ERR_CONFIG;
	}
	if (config_proxy_validate(cfg, err, err_len))
		return ERR_CONFIG;
	if (strcmp(cfg->db_synchronous, "full") && strcmp(cfg->db_synchronous, "normal")) {
		snprintf(err, err_len, "db_synchronous must be full or normal");
		return ERR_CONFIG;
	}
	if (config_socket_url(cfg, "stored-admin.ipc", url, sizeof(url))) {
		snprintf(err, err_len, "run_dir '%s' is too long for a Unix socket path", cfg->run_dir);
		return ERR_CONFIG;
	}
	return config_link_validate(cfg, err, err_len);
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

/* Writes each "change needs" label with its meaning through format, which
 * takes the two strings (a label shared by two values is written once). */
static void config_write_legend(FILE *out, const char *format)
{
	for (size_t c = 0; c < sizeof(config_changes) / sizeof(config_changes[0]); c++)
		if (config_changes[c].meaning)
			fprintf(out, format, config_changes[c].label, config_changes[c].meaning);
}

/* Calls row() for every key in table order, and heading() before the first
 * key of each section. */
static void config_write_rows(FILE *out, void (*heading)(FILE *out, const char *section),
			      void (*row)(FILE *out, const struct config_key *k))
{
	const char *section = "";

	for (size_t i = 0; i < CONFIG_NKEYS; i++) {
		if (strcmp(section, config_keys[i].section) != 0) {
			section = config_keys[i].section;
			heading(out, section);
		}
		row(out, &config_keys[i]);
	}
}

static void config_sample_heading(FILE *out, const char *section)
{
	fprintf(out, "\n# [%s]\n", section);
}

static void config_sample_row(FILE *out, const struct config_key *k)
{
	fprintf(out, "# %s\n# change needs: %s", k->doc, config_changes[k->change].label);
	if (k->type != CONFIG_STR) /* out of the range the daemons refuse to start */
		fprintf(out, " [%lld..%lld]", (long long)k->min, (long long)k->max);
	fprintf(out, "\n%s = %s\n", k->name, k->default_value);
}

void config_write_sample(FILE *out)
{
	fprintf(out, "# relay.conf - every key with its default.  Unknown keys are an error.\n"
		     "# What a change of a key needs:\n");
	config_write_legend(out, "#   %s: %s\n");
	config_write_rows(out, config_sample_heading, config_sample_row);
}

/* Writes text into a Markdown table cell: '|' and '*' are escaped. */
static void config_md_text(FILE *out, const char *text)
{
	for (const char *p = text; *p; p++) {
		if (*p == '|' || *p == '*')
			fputc('\\', out);
		fputc(*p, out);
	}
}

static void config_md_heading(FILE *out, const char *section)
{
	fprintf(out, "\n#### [%s]\n\n| key | default | range | change needs | what it does |\n"
		     "|---|---|---|---|---|\n", section);
}

static void config_md_row(FILE *out, const struct config_key *k)
{
	fprintf(out, "| `%s` | ", k->name);
	if (k->default_value[0])
		fprintf(out, "`%s` | ", k->default_value);
	else
		fprintf(out, "(empty) | ");
	if (k->type == CONFIG_STR)
		fprintf(out, "text | ");
	else
		fprintf(out, "%lld..%lld | ", (long long)k->min, (long long)k->max);
	fprintf(out, "%s | ", config_changes[k->change].label);
	config_md_text(out, k->doc);
	fprintf(out, " |\n");
}

void config_write_markdown(FILE *out)
{
	fprintf(out, "\n| change needs | what applies a changed value |\n|---|---|\n");
	config_write_legend(out, "| %s | %s |\n");
	config_write_rows(out, config_md_heading, config_md_row);
	fprintf(out, "\n");
}

int config_socket_url(const struct config *cfg, const char *name, char *url, size_t url_len)
{
	struct sockaddr_un sun;
	int n = snprintf(url, url_len, "ipc://%s/%s", cfg->run_dir, name);

	if (n < 0 || (size_t)n >= url_len || (size_t)n - 6 >= sizeof(sun.sun_path))
		return ERR_TOOBIG;
	return 0;
}

int config_link_url(const struct config *cfg, enum config_link channel, char *url, size_t url_len)
{
	const char *set = channel == CONFIG_LINK_RPC ? cfg->link_rpc_url : cfg->link_pub_url;
	int n;

	if (!set[0])
		return config_socket_url(cfg, channel == CONFIG_LINK_RPC ? "stored-rpc.ipc"
									: "stored-pub.ipc",
					 url, url_len);
	n = snprintf(url, url_len, "%s", set);
	return n < 0 || (size_t)n >= url_len ? ERR_TOOBIG : 0;
}

void config_link_tls(const struct config *cfg, struct peerlink_tls *tls)
{
	*tls = (struct peerlink_tls){ cfg->link_tls_ca_file, cfg->link_tls_cert_file,
				      cfg->link_tls_key_file, cfg->link_tls_server_name };
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

/* Whether process who keeps its running value of a key with change c. */
static int config_kept_by(enum config_change c, enum config_process who)
{
	if (who == CONFIG_FOR_STORED)
		return c != CONFIG_LIVE_ALL;
	return c == CONFIG_WORKER || c == CONFIG_BOTH || c == CONFIG_STORED_FIRST;
}

static void config_log_kept(const struct config_key *k, enum config_process who)
{
	if (who == CONFIG_FOR_STORED)
		log_warnx("reload: %s changed; stored applies it at its next start (a worker applies"
			  " its own keys at once)", k->name);
	else
		log_warnx("reload: %s changed; restart %s to apply it", k->name,
			  k->change == CONFIG_STORED_FIRST ? "stored, then the workers" : "the worker");
}

size_t config_keep_running(const struct config *running, struct config *next,
			   enum config_process who)
{
	size_t kept = 0;

	for (size_t i = 0; i < CONFIG_NKEYS; i++) {
		const struct config_key *k = &config_keys[i];

		if (!config_kept_by(k->change, who) || config_key_same(k, running, next))
			continue;
		config_log_kept(k, who);
		memcpy((char *)next + k->offset, (const char *)running + k->offset, k->size);
		kept++;
	}
	return kept;
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
