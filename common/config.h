/*
 * config.h - the relay's configuration: one declarative table.
 *
 * The file format is `key = value` lines; `#` starts a comment; blank lines
 * are ignored.  Keys are unique across sections: a section is only a
 * heading of the sample file and the README (`# [storage]`), never syntax.
 * Unknown keys and out-of-range values are errors.
 *
 * Every key's type, default, bounds, section, what a change of it needs and
 * one-sentence doc live in one table (config.c).  The table drives parsing,
 * validation, each process's reload and the docs: `stored --print-config`
 * writes etc/relay.conf and `stored --print-config=markdown` the README's
 * config table (`make config-docs`).  A loaded struct config is an immutable
 * snapshot: handlers read it, a reload builds a new one.
 */
#ifndef COMMON_CONFIG_H
#define COMMON_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#define CONFIG_PATH_MAX 200
#define CONFIG_TEXT_MAX 512

struct config {
	/* [network] */
	char bind[64];
	uint32_t port;
	uint32_t workers;
	uint32_t listen_check_ms;         /* 0: no listener checks (listencheck.h) */
	uint32_t listen_check_timeout_ms; /* for connecting and each of a check's two answers */
	char real_ip_header[32];   /* "" or X-Forwarded-For (relayd/realip.h) */
	char trusted_proxies[CONFIG_TEXT_MAX]; /* ranges whose real_ip_header counts */
	uint32_t ws_deflate;           /* 1: accept permessage-deflate (relayd/wsext.h) */
	uint32_t ws_deflate_min_bytes; /* shorter messages go uncompressed */
	uint32_t ws_deflate_level;     /* zlib level, 1-9 */
	/* [paths] */
	char data_dir[CONFIG_PATH_MAX];
	char run_dir[CONFIG_PATH_MAX];
	char socket_group[64]; /* empty: the sockets are 0600 (rundir.h) */
	/* [link] between the workers and stored (peerlink.h); "": ipc:// in run_dir */
	char link_rpc_url[CONFIG_PATH_MAX];
	char link_pub_url[CONFIG_PATH_MAX];
	char link_reply_url[CONFIG_PATH_MAX]; /* a port per worker: this one plus its id */
	char link_tls_ca_file[CONFIG_PATH_MAX];
	char link_tls_cert_file[CONFIG_PATH_MAX];
	char link_tls_key_file[CONFIG_PATH_MAX];
	char link_tls_server_name[CONFIG_TEXT_MAX];
	uint32_t link_insecure;   /* 0/1: plain tcp:// off loopback */
	uint32_t link_timeout_ms; /* a tcp link silent this long counts as down (0: never) */
	/* [relay] NIP-11 document */
	char relay_name[CONFIG_TEXT_MAX];
	char relay_description[CONFIG_TEXT_MAX];
	char relay_pubkey[65];
	char relay_contact[CONFIG_TEXT_MAX];
	char relay_url[CONFIG_TEXT_MAX];
	char relay_software[CONFIG_TEXT_MAX]; /* NIP-11 software: a URL */
	char relay_icon[CONFIG_TEXT_MAX];     /* the NIP-11 URLs below: "" leaves them out */
	char relay_banner[CONFIG_TEXT_MAX];
	char relay_privacy_policy[CONFIG_TEXT_MAX];
	char relay_terms_of_service[CONFIG_TEXT_MAX];
	char relay_self[65]; /* NIP-11 self: the relay's own pubkey, 64 hex or "" */
	/* [limits] */
	uint32_t max_message_bytes;
	uint32_t max_subscriptions;
	uint32_t max_filters;
	uint32_t max_limit;
	uint32_t max_subid_length;
	uint32_t max_event_tags;
	uint32_t max_content_length; /* characters */
	uint32_t max_filter_values;
	uint32_t max_outbound_bytes;
	uint32_t held_deliveries;
	uint32_t max_connections_per_ip;
	uint32_t ping_interval; /* seconds idle before a websocket ping (keepalive.h; 0: off) */
	uint32_t events_per_second, events_burst;
	uint32_t reqs_per_second, reqs_burst;
	uint32_t lane_depth;          /* per lane, before it refuses or pauses */
	uint32_t max_queued_messages; /* per connection, before its reads pause */
	uint32_t rate_limit_strikes;
	uint32_t limit_loopback;
	int64_t created_at_max_future;
	int64_t created_at_max_past;
	/* [storage] */
	uint32_t commit_batch;
	uint32_t query_threads;
	uint32_t query_queue_max; /* queries waiting for a query thread */
	uint32_t query_queue_per_conn; /* of them, one connection's */
	uint32_t query_threads_per_conn; /* of the query threads, one connection's at once */
	uint32_t query_threads_light;    /* of the query threads, kept for cheap connections */
	uint32_t query_heavy_ms;         /* CPU of one query that makes its connection heavy */
	uint32_t query_nice;             /* nice of the query threads not kept for cheap ones */
	uint32_t query_turns;     /* 1: each connection's queries in turn (turnqueue.h) */
	uint32_t query_time_limit_ms;
	char db_synchronous[16];
	uint32_t db_cache_mb;     /* page cache per SQLite connection (stored/db.h) */
	uint32_t db_read_map;     /* 0/1: stored/readmap.h for the readers */
	uint32_t db_wal_buffer;   /* 0/1: stored/walbuf.h for the writer */
	uint32_t wal_max_mb;      /* the WAL's size where the writer checkpoints itself */
	uint32_t disk_reserve_mb; /* free space below which new events are refused */
	uint32_t writer_nice;     /* nice value of the writer and checkpoint threads */
	uint32_t search;          /* 0/1: NIP-50 full-text index */
	uint32_t search_index_delay_ms; /* text indexed behind the events (0: in each commit) */
	uint32_t search_index_batch;
	uint32_t expire_interval; /* seconds between removals of expired events */
	char retention[CONFIG_TEXT_MAX]; /* rules, see retention.h */
	/* [workers] */
	uint32_t verify_threads;
	uint32_t express_lane;      /* 0/1: a second thread per lane for cheap messages */
	uint32_t inline_request_bytes; /* small requests the loop parses itself (0: none) */
	uint32_t request_slice_us; /* EEVDF slice of the request-path threads (0: default) */
	uint32_t verify_nice;       /* nice value of each lane's first thread */
	uint32_t store_timeout_ms;
	uint32_t answer_timeout_ms;
	uint32_t deliver_queue;
	uint32_t request_backlog; /* clients' requests waiting for room to stored */
	uint32_t metrics_public; /* 0: /metrics answers loopback clients only */
	uint32_t conns_list_max;   /* relayctl conns: the most connections listed */
	uint32_t conns_timeout_ms; /* relayctl conns and kick: the wait for each worker */
	/* [access] */
	char auth_required[16];     /* no, writes, reads or all (NIP-42) */
	char auth_challenge[16];    /* connect or when_needed (NIP-42) */
	char private_kinds[CONFIG_TEXT_MAX]; /* kinds only their parties may read */
	uint32_t min_pow_difficulty; /* NIP-13 leading zero bits of the id */
	char admin_pubkeys[CONFIG_TEXT_MAX]; /* NIP-86: comma-separated hex pubkeys */
	char plugin[CONFIG_PATH_MAX];  /* write-policy program (stored/plugin.h); "": none */
	uint32_t plugin_timeout_ms;    /* its longest answer */
	uint32_t plugin_queue;         /* events waiting for it, at most */
	uint32_t plugin_fail_open;     /* 1: accept when it fails; 0: error: */
	/* [sync] NIP-77 negentropy (stored/negsess.h) */
	uint32_t negentropy;           /* 1: serve NEG-OPEN and advertise 77 */
	uint32_t neg_sessions_per_conn;
	uint32_t neg_sessions_max;     /* over all connections of the relay */
	uint32_t neg_max_records;      /* items one session may hold */
	uint32_t neg_idle_seconds;
	uint32_t neg_read_ms;          /* the time limit of a session's read */
	uint32_t neg_frame_bytes;      /* binary bytes of one message either way */
	/* [memory] */
	uint32_t heap_trim_interval; /* seconds between malloc_trim()s (heaptrim.h; 0: never) */
	/* [logging] */
	char log_level[16];
	char log_format[16]; /* text or json (log.h) */
};

/*
 * Fills *out with the defaults, then applies the file at path (NULL: defaults
 * only).  Returns 0, or ERR_CONFIG / ERR_IO with a message naming the file,
 * line and key in err.
 */
int config_load(const char *path, struct config *out, char *err, size_t err_len);

/* Applies one "key = value" setting; used by config_load and tests. */
int config_set(struct config *cfg, const char *key, const char *value, char *err, size_t err_len);

/* The kinds of a list such as private_kinds ("4,1059", checked at load),
 * the first max of them into out; returns how many the list holds. */
size_t config_kinds(const char *text, uint32_t *out, size_t max);

/*
 * What a change of a key needs before it takes effect (the table's "change
 * needs" column).  "Reload" is SIGHUP: `systemctl reload`, `relayctl reload`.
 */
enum config_change {
	CONFIG_LIVE,         /* the workers apply it on reload; stored at most warns at start */
	CONFIG_LIVE_ALL,     /* stored and the workers apply it on reload */
	CONFIG_WORKER,       /* each worker reads it at start */
	CONFIG_STORED,       /* stored reads it at start; a worker applies its use on reload */
	CONFIG_BOTH,         /* stored and each worker read it at start */
	CONFIG_STORED_FIRST, /* stored reads it at start; the workers show stored's value */
	CONFIG_RUN,          /* only `make run` (etc/run.sh) reads it, at start */
};

/* The process whose reload config_keep_running() serves. */
enum config_process { CONFIG_FOR_WORKER, CONFIG_FOR_STORED };

/*
 * For a reload by process who: copies back into next the running value of
 * every key that who cannot apply on reload and that differs, and logs each
 * one as "reload: KEY changed; ..." with what to restart.  A worker keeps
 * the keys a change of which needs a worker restart (CONFIG_WORKER,
 * CONFIG_BOTH, CONFIG_STORED_FIRST).  stored keeps every key but
 * CONFIG_LIVE_ALL ones: its threads read their settings once, so it names
 * every other changed key, even one only the workers use.  Returns how many
 * keys it kept.
 */
size_t config_keep_running(const struct config *running, struct config *next,
			   enum config_process who);

/* Writes etc/relay.conf: every key at its default, under its section, after
 * a comment with its doc, what a change needs and its range. */
void config_write_sample(FILE *out);

/* Writes the README's config table: a legend of the "change needs" values,
 * then per section a `####` heading and a Markdown table with the columns
 * key | default | range | change needs | what it does. */
void config_write_markdown(FILE *out);

/* Writes the path of a socket in run_dir ("stored-rpc.ipc") as an nng URL
 * "ipc:///..." into url.  Returns 0 or ERR_TOOBIG if it does not fit the
 * Unix socket path limit. */
int config_socket_url(const struct config *cfg, const char *name, char *url, size_t url_len);

/* The link channels between the workers and stored (proto/msg.h). */
enum config_link { CONFIG_LINK_RPC, CONFIG_LINK_PUB };

/* Writes the URL stored listens on and the workers dial for channel into
 * url: its link_*_url key, or the ipc:// socket in run_dir when that key is
 * empty.  Returns 0 or ERR_TOOBIG. */
int config_link_url(const struct config *cfg, enum config_link channel, char *url, size_t url_len);

/* The link's TLS files (common/peerlink.h), as views into cfg. */
struct peerlink_tls;
void config_link_tls(const struct config *cfg, struct peerlink_tls *tls);

/* One key of the table and its value in a loaded config (for listings such
 * as the admin socket's `config`).  Pointers borrow from the table and from
 * the config passed to config_foreach(). */
struct config_entry {
	const char *name;
	const char *section;
	const char *doc;
	int is_text;      /* 1: the value is text; 0: it is number */
	const char *text;
	int64_t number;
};

/* Called once per key; a nonzero return stops the walk. */
typedef int (*config_visit_fn)(void *arg, const struct config_entry *entry);

/*
 * Calls fn for every key of the table, in table (and so sample file) order,
 * with its value in cfg.  Returns 0 after the last key, or the first nonzero
 * value fn returned.
 */
int config_foreach(const struct config *cfg, config_visit_fn fn, void *arg);

/* The same for only the keys whose value in next differs from that in
 * running, with next's value. */
int config_foreach_change(const struct config *running, const struct config *next,
			  config_visit_fn fn, void *arg);

#endif
