/*
 * test_msg.c - checks proto/msg.c: every message's encoder and decoder, and
 * the decoders' refusals.
 *
 * Every message type has a sample in the case table below; each table-driven
 * test runs over all of them: round trip (every field compared), every
 * truncated length, a trailing byte, wrong versions and unknown types.  Then
 * come hand-built bodies with invalid values and bogus counts (run under an
 * address-space limit when not under ASan, so a decoder that allocated from
 * a count before checking it would fail with ERR_NOMEM instead of
 * ERR_TRUNC), and a seeded random round trip of SUB_OPEN.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "../../common/buf.h"
#include "../../common/err.h"
#include "../../common/event.h"
#include "../../common/filter.h"
#include "../../proto/msg.h"
#include "../../proto/wire.h"
#include "../support/suite.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif

#define ANY_ERROR 1 /* an expectation: some negative code */

static const struct msg_header sample_header = {
	.version = PROTO_VERSION, .type = 0, .worker = 7, .request_id = 0xdeadbeef
};

static const uint8_t *body_of(const struct buf *b)
{
	return (const uint8_t *)b->data + MSG_HEADER_LEN;
}

static size_t body_len(const struct buf *b)
{
	return b->len - MSG_HEADER_LEN;
}

/* A decoded view must equal want and point into the body it came from. */
static void assert_view(struct msg_str got, const char *want, uint32_t len, const uint8_t *body,
			size_t body_size)
{
	ck_assert_uint_eq(got.len, len);
	ck_assert_ptr_nonnull(got.ptr);
	ck_assert((const uint8_t *)got.ptr >= body);
	ck_assert((const uint8_t *)got.ptr + got.len <= body + body_size);
	if (len)
		ck_assert(memcmp(got.ptr, want, len) == 0);
}

static void assert_msg_str(struct msg_str got, struct msg_str want, const uint8_t *body,
			   size_t body_size)
{
	assert_view(got, want.ptr, want.len, body, body_size);
}

static void assert_bytes_eq(const void *a, const void *b, size_t len)
{
	if (len)
		ck_assert(memcmp(a, b, len) == 0);
}

/* ---- field-by-field filter comparison ---- */

static void assert_filter_tag_eq(const struct filter_tag *got, const struct filter_tag *want)
{
	ck_assert_int_eq(got->name, want->name);
	ck_assert_uint_eq(got->nvalues, want->nvalues);
	for (uint32_t i = 0; i < want->nvalues; i++) {
		ck_assert_uint_eq(got->lens[i], want->lens[i]);
		assert_bytes_eq(got->values[i], want->values[i], want->lens[i]);
		ck_assert_int_eq(got->values[i][got->lens[i]], '\0');
	}
}

static void assert_filter_eq(const struct filter *got, const struct filter *want)
{
	ck_assert_int_eq(got->has_ids, want->has_ids);
	ck_assert_uint_eq(got->nids, want->has_ids ? want->nids : 0);
	assert_bytes_eq(got->ids, want->ids, (size_t)got->nids * 32);
	ck_assert_int_eq(got->has_authors, want->has_authors);
	ck_assert_uint_eq(got->nauthors, want->has_authors ? want->nauthors : 0);
	assert_bytes_eq(got->authors, want->authors, (size_t)got->nauthors * 32);
	ck_assert_int_eq(got->has_kinds, want->has_kinds);
	ck_assert_uint_eq(got->nkinds, want->has_kinds ? want->nkinds : 0);
	for (uint32_t i = 0; i < got->nkinds; i++)
		ck_assert_uint_eq(got->kinds[i], want->kinds[i]);
	ck_assert_uint_eq(got->ntags, want->ntags);
	for (uint32_t i = 0; i < want->ntags; i++)
		assert_filter_tag_eq(&got->tags[i], &want->tags[i]);
	ck_assert_int_eq(got->since, want->since);
	ck_assert_int_eq(got->until, want->until);
	ck_assert_int_eq(got->has_limit, want->has_limit);
	if (want->has_limit)
		ck_assert_uint_eq(got->limit, want->limit);
	if (want->search)
		ck_assert_str_eq(got->search, want->search);
	else
		ck_assert_ptr_null(got->search);
}

/* ---- samples: one per message shape ---- */

static const struct msg_hello hello_sample = { .pid = 4242, .boot_id = 0x0123456789abcdefULL };
static const struct msg_hello_ack hello_ack_sample = { .boot_id = UINT64_MAX - 1 };

static const char tag_nul_value[] = { 'x', '\0', 'y', '\0' };
static struct event_tag event_tags[] = {
	{ 'e', 3, "abc" }, { 'Z', 0, "" }, { 'p', 3, tag_nul_value },
};
static char event_json[] = "{\"id\":\"00\",\"kind\":30023,\"content\":\"h\\u00e9\"}";
static char event_content[] = "h\xc3\xa9";
static const struct msg_event_store event_store_sample = {
	.conn_id = 0x1122334455667788ULL,
	.event = {
		.id = { 1, 2, 3, [31] = 0x31 },
		.pubkey = { 0xaa, [15] = 0x80, [31] = 0x32 },
		.sig = { 0xff, [32] = 0x7f, [63] = 0x64 },
		.created_at = 1700000000,
		.kind = 30023,
		.tags = event_tags,
		.ntags = 3,
		.json = event_json,
		.json_len = sizeof(event_json) - 1,
		.expiration = 1800000000,
		.flags = EVENT_FLAG_PROTECTED | EVENT_FLAG_VANISH_HERE,
		.content = event_content,
		.content_len = sizeof(event_content) - 1,
	},
	.source = { "2001:db8::7", 11 },
};
static const struct msg_event_store event_store_bare = {
	.conn_id = 1,
	.event = { .created_at = -1, .kind = EVENT_KIND_MAX, .json = event_json, .json_len = 0 },
};

static const struct msg_event_result event_result_sample = {
	.conn_id = 99,
	.id = { 9, 8, 7, [31] = 1 },
	.accepted = true,
	.message = { "duplicate: already have this event", 34 },
};
static const struct msg_event_result event_result_refused = {
	.conn_id = 0,
	.id = { 0 },
	.accepted = false,
	.message = { "", 0 },
};

static struct msg_event_results_item event_results_items[] = {
	{ 7, { .conn_id = 99, .id = { 9, 8, 7, [31] = 1 }, .accepted = true, .message = { "", 0 } } },
	{ 0x7fffffff, { .conn_id = UINT64_MAX, .id = { [0] = 0xff }, .accepted = false,
			.message = { "blocked: not on the list", 24 } } },
	{ 1, { .conn_id = 0, .id = { 0 }, .accepted = true,
	       .message = { "duplicate: already have this event", 34 } } },
};
static const struct msg_event_results event_results_sample = { 3, event_results_items };
static const struct msg_event_results event_results_bare = { 0, NULL };

/* A bundle's parts are opaque here (any bytes past a header's length). */
static struct msg_str bundle_parts[] = {
	{ "\x01\x03\x00\x01\x00\x00\x00\x07", 8 },
	{ "\x01\x08\x00\x02\x00\x00\x00\x09 and some body", 22 },
};
static const struct msg_bundle bundle_sample = { 2, bundle_parts };
static const struct msg_bundle bundle_bare = { 0, NULL };

static uint8_t f0_ids[2][32] = { { 0x01, 0x02 }, { [31] = 0xff } };
static uint8_t f0_authors[1][32] = { { 0xaa, [31] = 0x55 } };
static uint32_t f0_kinds[] = { 1, 30023, 70000 };
static char value_a[] = "a", value_bb[] = "bb", value_empty[] = "";
static char value_nul[] = { 'x', '\0', 'y', '\0' };
static char *f0_e_values[] = { value_a, value_bb };
static uint32_t f0_e_lens[] = { 1, 2 };
static char *f0_t_values[] = { value_empty, value_nul };
static uint32_t f0_t_lens[] = { 0, 3 };
static struct filter_tag f0_tags[] = {
	{ 'e', 2, f0_e_values, f0_e_lens },
	{ 't', 2, f0_t_values, f0_t_lens },
};
static char f0_search[] = "hello world";
static struct filter_tag f2_tags[] = { { 'Q', 0, NULL, NULL } };
static char f2_search[] = "";
static struct filter sample_filters[] = {
	{
		.ids = f0_ids, .nids = 2, .has_ids = true,
		.authors = f0_authors, .nauthors = 1, .has_authors = true,
		.kinds = f0_kinds, .nkinds = 3, .has_kinds = true,
		.tags = f0_tags, .ntags = 2,
		.since = 100, .until = 200,
		.limit = 50, .has_limit = true,
		.search = f0_search,
	},
	/* No constraints, as filter_init() makes it. */
	{ .since = INT64_MIN, .until = INT64_MAX },
	/* Present but empty lists, a tag with no values, limit 0, empty search. */
	{
		.has_ids = true, .has_authors = true, .has_kinds = true,
		.tags = f2_tags, .ntags = 1,
		.since = -5, .until = 0,
		.limit = 0, .has_limit = true,
		.search = f2_search,
	},
};
static const struct msg_sub_open sub_open_sample = {
	.conn_id = 0x0102030405060708ULL,
	.sub_serial = 77,
	.sub_id = { "sub-1", 5 },
	.flags = MSG_SUB_HISTORY,
	.nfilters = 3,
	.filters = sample_filters,
	.nviewers = 2,
	.viewers = { { 0xaa, 1, 2, 3 }, { 0xbb, [31] = 0xcc } },
};
static const struct msg_sub_open sub_open_bare = {
	.conn_id = 5,
	.sub_serial = 0,
	.sub_id = { "0123456789012345678901234567890123456789012345678901234567890123", 64 },
	.flags = MSG_SUB_RESUME,
	.resume_after = 0x1122334455667788ULL,
	.nfilters = 0,
	.filters = NULL,
};

static const struct msg_sub_replay sub_replay_sample = {
	.conn_id = 0x1112131415161718ULL,
	.sub_serial = 9,
	.after = 41,
	.before = 0x0102030405060708ULL,
	.nfilters = 3,
	.filters = sample_filters,
};
static const struct msg_sub_replay sub_replay_bare = {
	.conn_id = 1, .sub_serial = 0, .after = 0, .before = 2, .nfilters = 0, .filters = NULL,
};

static struct msg_str query_jsons[] = { { "{}", 2 }, { "", 0 }, { "{\"a\":1}", 7 } };
static const struct msg_query_events query_events_sample = {
	.conn_id = 3, .sub_serial = 4, .count = 3, .events = query_jsons,
};
static const struct msg_query_events query_events_bare = { .conn_id = 3, .sub_serial = 4 };

static const struct msg_query_last query_last_sample = {
	.events = { .conn_id = UINT64_MAX, .sub_serial = 9, .count = 3, .events = query_jsons },
	.max_seq = 0x0102030405060708ULL,
};
static const struct msg_query_last query_last_bare = { .events = { .conn_id = 1 }, .max_seq = 0 };

static const struct msg_query_done query_done_sample = {
	.conn_id = 12, .sub_serial = UINT32_MAX, .status = MSG_QUERY_CLOSED, .max_seq = 0,
	.message = { "error: too slow", 15 },
};
static const struct msg_query_done query_done_eose = {
	.conn_id = 12, .sub_serial = 1, .status = MSG_QUERY_EOSE, .max_seq = UINT64_MAX,
	.message = { "", 0 },
};

static const struct msg_sub_close sub_close_sample = { .conn_id = 6, .sub_id = { "x", 1 } };
static const struct msg_conn_closed conn_closed_sample = { .conn_id = UINT64_MAX };

static struct msg_target deliver_targets[] = {
	{ 1, 2 }, { UINT64_MAX, UINT32_MAX }, { 0, 0 },
};
static const struct msg_deliver deliver_sample = {
	.seq = 123456789, .commit_seq = 987654321, .event_json = { "{\"kind\":1}", 10 },
	.ntargets = 3, .targets = deliver_targets, .expiration = 1700000123,
};
static const struct msg_deliver deliver_bare = { .seq = 0, .event_json = { "", 0 } };

static const struct msg_worker_stats worker_stats_sample = {
	.pid = 1234, .started_at = 1700000001, .connections = 2, .subscriptions = 3,
	.messages_in = 4, .messages_out = 5, .events_rejected = 6, .deliver_gaps = 7,
	.rate_limited = 8, .conns_refused = 9, .lane_refused = 10, .reads_paused = 11,
	.requests_on_loop = 12,
	.listener_restarts = 13, .unmasked_closed = 14, .store_timeouts = 15,
	.too_big_closed = 16,
	.pings_sent = 16, .ping_timeouts = 17,
	.ok_latency = { .counts = { 1, 2, 3, [11] = UINT64_MAX }, .sum_us = 12345, .count = 42 },
	.proc = { .rss_bytes = 18, .cpu_us = 19, .open_fds = 20, .max_fds = 21,
		  .start_time = 1700000002 },
};

static const struct msg_manage manage_sample = {
	.pubkey = { 0x12, [31] = 0x34 }, .request = { "{\"method\":\"stats\",\"params\":[]}", 31 },
};
static const struct msg_manage_result manage_result_sample = { .response = { "{\"result\":true}", 15 } };

static struct msg_str policy_ips[] = { { "203.0.113.7", 11 }, { "2001:db8::1", 11 } };
static const struct msg_policy policy_sample = {
	.relay_name = { "n", 1 }, .relay_description = { "", 0 }, .relay_icon = { "https://x/i.png", 15 },
	.nblocked = 2, .blocked_ips = policy_ips, .writes_restricted = 1,
};
static const struct msg_policy policy_bare = { .relay_name = { "", 0 } };

static const struct msg_metrics metrics_sample = {
	.prometheus = { "relay_up 1\n", 11 }, .summary = { "{\"a\":1}", 7 },
};

static const struct msg_count count_sample = {
	.conn_id = 42, .sub_id = { "cnt", 3 }, .nfilters = 3, .filters = sample_filters,
};
static const struct msg_count count_bare = { .conn_id = 0, .sub_id = { "c", 1 } };
static const struct msg_count_result count_result_sample = {
	.conn_id = 42, .sub_id = { "cnt", 3 }, .status = MSG_QUERY_EOSE, .count = 123456789012ULL,
	.has_hll = true, .hll = { 1, 2, 3, [128] = 9, [255] = 31 }, .message = { "", 0 },
};
static const struct msg_count_result count_result_refused = {
	.conn_id = 1, .sub_id = { "c", 1 }, .status = MSG_QUERY_CLOSED,
	.message = { "error: no", 9 },
};

static const struct msg_neg_open neg_open_sample = {
	.conn_id = 5, .sub_id = { "neg-1", 5 },
	.filter = {
		.ids = f0_ids, .nids = 2, .has_ids = true,
		.kinds = f0_kinds, .nkinds = 3, .has_kinds = true,
		.tags = f0_tags, .ntags = 2,
		.since = 100, .until = 200,
		.limit = 50, .has_limit = true,
	},
	.nviewers = 1, .viewers = { { 0x11, [31] = 0x22 } },
	.message = { "\x61\x00\x02\x00", 4 },
};
static const struct msg_neg_open neg_open_bare = {
	.conn_id = 6, .sub_id = { "n", 1 }, .filter = { .since = INT64_MIN, .until = INT64_MAX },
	.message = { "\x61", 1 },
};
static const struct msg_neg_msg neg_msg_sample = {
	.conn_id = 7, .sub_id = { "neg-1", 5 }, .message = { "\x61\x00\x00", 3 },
};
static const struct msg_neg_close neg_close_sample = { .conn_id = 8, .sub_id = { "neg-1", 5 } };
static const struct msg_neg_reply neg_reply_sample = {
	.conn_id = 9, .sub_id = { "neg-1", 5 }, .status = MSG_NEG_MESSAGE, .payload = { "\x61", 1 },
};
static const struct msg_neg_reply neg_reply_error = {
	.conn_id = 9, .sub_id = { "neg-1", 5 }, .status = MSG_NEG_ERROR,
	.payload = { "closed: gone", 12 },
};

/* ---- per-type decode and compare ---- */

static void assert_event_eq(const struct event *got, const struct event *want)
{
	assert_bytes_eq(got->id, want->id, EVENT_ID_LEN);
	assert_bytes_eq(got->pubkey, want->pubkey, EVENT_PUBKEY_LEN);
	assert_bytes_eq(got->sig, want->sig, EVENT_SIG_LEN);
	ck_assert_int_eq(got->created_at, want->created_at);
	ck_assert_uint_eq(got->kind, want->kind);
	ck_assert_uint_eq(got->ntags, want->ntags);
	for (uint32_t i = 0; i < want->ntags; i++) {
		ck_assert_int_eq(got->tags[i].name, want->tags[i].name);
		ck_assert_uint_eq(got->tags[i].value_len, want->tags[i].value_len);
		assert_bytes_eq(got->tags[i].value, want->tags[i].value, want->tags[i].value_len);
		ck_assert_int_eq(got->tags[i].value[got->tags[i].value_len], '\0');
	}
	ck_assert_uint_eq(got->json_len, want->json_len);
	assert_bytes_eq(got->json, want->json, want->json_len);
	ck_assert_int_eq(got->json[got->json_len], '\0');
	ck_assert_int_eq(got->expiration, want->expiration);
	ck_assert_uint_eq(got->flags, want->flags);
	ck_assert_uint_eq(got->content_len, want->content_len);
	assert_bytes_eq(got->content, want->content ? want->content : "", want->content_len);
	ck_assert_int_eq(got->content[got->content_len], '\0');
}

/* Each decoder below decodes body; if want is non-NULL and the decode worked
 * it compares every field with *want; it releases what it decoded. */
typedef int (*decode_fn)(const uint8_t *body, size_t len, const void *want);

static int hello_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_hello *w = want;
	struct msg_hello m;
	int err = msg_decode_hello(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.pid, w->pid);
		ck_assert_uint_eq(m.boot_id, w->boot_id);
	}
	return err;
}

static int hello_ack_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_hello_ack *w = want;
	struct msg_hello_ack m;
	int err = msg_decode_hello_ack(body, len, &m);

	if (!err && w)
		ck_assert_uint_eq(m.boot_id, w->boot_id);
	return err;
}

static int event_store_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_event_store *w = want;
	struct msg_event_store m;
	int err = msg_decode_event_store(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.event.storage);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_event_eq(&m.event, &w->event);
		ck_assert_uint_eq(m.source.len, w->source.len);
		ck_assert(m.source.len == 0 || !memcmp(m.source.ptr, w->source.ptr, m.source.len));
	}
	msg_event_store_release(&m);
	msg_event_store_release(&m);
	return 0;
}

static int event_result_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_event_result *w = want;
	struct msg_event_result m;
	int err = msg_decode_event_result(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_bytes_eq(m.id, w->id, EVENT_ID_LEN);
		ck_assert_int_eq(m.accepted, w->accepted);
		assert_msg_str(m.message, w->message, body, len);
	}
	return err;
}

static int event_results_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_event_results *w = want;
	struct msg_event_results m;
	int err = msg_decode_event_results(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.items);
		ck_assert_uint_eq(m.count, 0);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.count, w->count);
		for (uint32_t i = 0; i < w->count; i++) {
			const struct msg_event_result *a = &m.items[i].result, *b = &w->items[i].result;

			ck_assert_uint_eq(m.items[i].request_id, w->items[i].request_id);
			ck_assert_uint_eq(a->conn_id, b->conn_id);
			assert_bytes_eq(a->id, b->id, EVENT_ID_LEN);
			ck_assert_int_eq(a->accepted, b->accepted);
			assert_msg_str(a->message, b->message, body, len);
		}
	}
	msg_event_results_release(&m);
	msg_event_results_release(&m);
	return 0;
}

static int bundle_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_bundle *w = want;
	struct msg_bundle m;
	int err = msg_decode_bundle(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.parts);
		ck_assert_uint_eq(m.count, 0);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.count, w->count);
		for (uint32_t i = 0; i < w->count; i++)
			assert_msg_str(m.parts[i], w->parts[i], body, len);
	}
	msg_bundle_release(&m);
	msg_bundle_release(&m);
	return 0;
}

static int sub_open_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_sub_open *w = want;
	struct msg_sub_open m;
	int err = msg_decode_sub_open(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.filters);
		ck_assert_uint_eq(m.nfilters, 0);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		ck_assert_uint_eq(m.sub_serial, w->sub_serial);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
		ck_assert_uint_eq(m.flags, w->flags);
		ck_assert_uint_eq(m.resume_after, w->resume_after);
		ck_assert_uint_eq(m.nfilters, w->nfilters);
		for (uint32_t i = 0; i < w->nfilters; i++)
			assert_filter_eq(&m.filters[i], &w->filters[i]);
		ck_assert_uint_eq(m.nviewers, w->nviewers);
		ck_assert(memcmp(m.viewers, w->viewers, (size_t)w->nviewers * 32) == 0);
	}
	msg_sub_open_release(&m);
	msg_sub_open_release(&m);
	return 0;
}

static int sub_replay_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_sub_replay *w = want;
	struct msg_sub_replay m;
	int err = msg_decode_sub_replay(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.filters);
		ck_assert_uint_eq(m.nfilters, 0);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		ck_assert_uint_eq(m.sub_serial, w->sub_serial);
		ck_assert_uint_eq(m.after, w->after);
		ck_assert_uint_eq(m.before, w->before);
		ck_assert_uint_eq(m.nfilters, w->nfilters);
		for (uint32_t i = 0; i < w->nfilters; i++)
			assert_filter_eq(&m.filters[i], &w->filters[i]);
	}
	msg_sub_replay_release(&m);
	msg_sub_replay_release(&m);
	return 0;
}

static int query_events_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_query_events *w = want;
	struct msg_query_events m;
	int err = msg_decode_query_events(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.events);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		ck_assert_uint_eq(m.sub_serial, w->sub_serial);
		ck_assert_uint_eq(m.count, w->count);
		for (uint32_t i = 0; i < w->count; i++)
			assert_msg_str(m.events[i], w->events[i], body, len);
	}
	msg_query_events_release(&m);
	msg_query_events_release(&m);
	return 0;
}

static int query_last_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_query_last *w = want;
	struct msg_query_last m;
	int err = msg_decode_query_last(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.events.events);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.events.conn_id, w->events.conn_id);
		ck_assert_uint_eq(m.events.sub_serial, w->events.sub_serial);
		ck_assert_uint_eq(m.events.count, w->events.count);
		for (uint32_t i = 0; i < w->events.count; i++)
			assert_msg_str(m.events.events[i], w->events.events[i], body, len);
		ck_assert_uint_eq(m.max_seq, w->max_seq);
	}
	msg_query_last_release(&m);
	msg_query_last_release(&m);
	return 0;
}

static int query_done_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_query_done *w = want;
	struct msg_query_done m;
	int err = msg_decode_query_done(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		ck_assert_uint_eq(m.sub_serial, w->sub_serial);
		ck_assert_uint_eq(m.status, w->status);
		ck_assert_uint_eq(m.max_seq, w->max_seq);
		assert_msg_str(m.message, w->message, body, len);
	}
	return err;
}

static int sub_close_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_sub_close *w = want;
	struct msg_sub_close m;
	int err = msg_decode_sub_close(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
	}
	return err;
}

static int conn_closed_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_conn_closed *w = want;
	struct msg_conn_closed m;
	int err = msg_decode_conn_closed(body, len, &m);

	if (!err && w)
		ck_assert_uint_eq(m.conn_id, w->conn_id);
	return err;
}

static int deliver_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_deliver *w = want;
	struct msg_deliver m;
	int err = msg_decode_deliver(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.targets);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.seq, w->seq);
		ck_assert_uint_eq(m.commit_seq, w->commit_seq);
		ck_assert_int_eq(m.expiration, w->expiration);
		assert_msg_str(m.event_json, w->event_json, body, len);
		ck_assert_uint_eq(m.ntargets, w->ntargets);
		for (uint32_t i = 0; i < w->ntargets; i++) {
			ck_assert_uint_eq(m.targets[i].conn_id, w->targets[i].conn_id);
			ck_assert_uint_eq(m.targets[i].sub_serial, w->targets[i].sub_serial);
		}
	}
	msg_deliver_release(&m);
	msg_deliver_release(&m);
	return 0;
}

static int worker_stats_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_worker_stats *w = want;
	struct msg_worker_stats m;
	int err = msg_decode_worker_stats(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.pid, w->pid);
		ck_assert_uint_eq(m.started_at, w->started_at);
		ck_assert_uint_eq(m.connections, w->connections);
		ck_assert_uint_eq(m.subscriptions, w->subscriptions);
		ck_assert_uint_eq(m.messages_in, w->messages_in);
		ck_assert_uint_eq(m.messages_out, w->messages_out);
		ck_assert_uint_eq(m.events_rejected, w->events_rejected);
		ck_assert_uint_eq(m.deliver_gaps, w->deliver_gaps);
		ck_assert_uint_eq(m.rate_limited, w->rate_limited);
		ck_assert_uint_eq(m.conns_refused, w->conns_refused);
		ck_assert_uint_eq(m.lane_refused, w->lane_refused);
		ck_assert_uint_eq(m.reads_paused, w->reads_paused);
		ck_assert_uint_eq(m.requests_on_loop, w->requests_on_loop);
		ck_assert_uint_eq(m.listener_restarts, w->listener_restarts);
		ck_assert_uint_eq(m.unmasked_closed, w->unmasked_closed);
		ck_assert_uint_eq(m.store_timeouts, w->store_timeouts);
		ck_assert_uint_eq(m.too_big_closed, w->too_big_closed);
		ck_assert_uint_eq(m.pings_sent, w->pings_sent);
		ck_assert_uint_eq(m.ping_timeouts, w->ping_timeouts);
		for (int i = 0; i < HISTO_BUCKETS; i++)
			ck_assert_uint_eq(m.ok_latency.counts[i], w->ok_latency.counts[i]);
		ck_assert_uint_eq(m.ok_latency.sum_us, w->ok_latency.sum_us);
		ck_assert_uint_eq(m.ok_latency.count, w->ok_latency.count);
		ck_assert_int_eq(memcmp(&m.proc, &w->proc, sizeof(m.proc)), 0);
	}
	return err;
}

static int metrics_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_metrics *w = want;
	struct msg_metrics m;
	int err = msg_decode_metrics(body, len, &m);

	if (!err && w) {
		assert_msg_str(m.prometheus, w->prometheus, body, len);
		assert_msg_str(m.summary, w->summary, body, len);
	}
	return err;
}

static int metrics_encode(struct buf *out, const void *m)
{
	return msg_encode_metrics(out, &sample_header, m);
}

static int policy_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_policy *w = want;
	struct msg_policy m;
	int err = msg_decode_policy(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.blocked_ips);
		return err;
	}
	if (w) {
		assert_msg_str(m.relay_name, w->relay_name, body, len);
		assert_msg_str(m.relay_description, w->relay_description, body, len);
		assert_msg_str(m.relay_icon, w->relay_icon, body, len);
		ck_assert_uint_eq(m.nblocked, w->nblocked);
		for (uint32_t i = 0; i < w->nblocked; i++)
			assert_msg_str(m.blocked_ips[i], w->blocked_ips[i], body, len);
		ck_assert_uint_eq(m.writes_restricted, w->writes_restricted);
	}
	msg_policy_release(&m);
	msg_policy_release(&m);
	return 0;
}

static int policy_encode(struct buf *out, const void *m)
{
	return msg_encode_policy(out, &sample_header, m);
}

static int manage_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_manage *w = want;
	struct msg_manage m;
	int err = msg_decode_manage(body, len, &m);

	if (!err && w) {
		assert_bytes_eq(m.pubkey, w->pubkey, EVENT_PUBKEY_LEN);
		assert_msg_str(m.request, w->request, body, len);
	}
	return err;
}

static int manage_encode(struct buf *out, const void *m)
{
	return msg_encode_manage(out, &sample_header, m);
}

static int manage_result_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_manage_result *w = want;
	struct msg_manage_result m;
	int err = msg_decode_manage_result(body, len, &m);

	if (!err && w)
		assert_msg_str(m.response, w->response, body, len);
	return err;
}

static int manage_result_encode(struct buf *out, const void *m)
{
	return msg_encode_manage_result(out, &sample_header, m);
}

static int count_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_count *w = want;
	struct msg_count m;
	int err = msg_decode_count(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.filters);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
		ck_assert_uint_eq(m.nfilters, w->nfilters);
		for (uint32_t i = 0; i < w->nfilters; i++)
			assert_filter_eq(&m.filters[i], &w->filters[i]);
	}
	msg_count_release(&m);
	msg_count_release(&m);
	return 0;
}

static int count_result_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_count_result *w = want;
	struct msg_count_result m;
	int err = msg_decode_count_result(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
		ck_assert_uint_eq(m.status, w->status);
		ck_assert_uint_eq(m.count, w->count);
		ck_assert_int_eq(m.has_hll, w->has_hll);
		if (w->has_hll)
			assert_bytes_eq(m.hll, w->hll, MSG_HLL_REGISTERS);
		assert_msg_str(m.message, w->message, body, len);
	}
	return err;
}

/* ---- CONNS_ASK, CONNS_LIST, CONN_KICK, CONN_KICKED ---- */

static const struct msg_conns_ask conns_ask_sample = { .max = 10000 };

static const uint8_t conn_info_keys[2][32] = { { 0xaa }, { 0xbb, [31] = 0x01 } };
static const struct msg_conn_info conn_info_sample[2] = {
	{ .conn_id = 0x0000000500000003ull, .address = { "2001:db8::17", 12 },
	  .since = 1700000000, .messages_in = 42, .messages_out = UINT64_MAX,
	  .subscriptions = 3, .npubkeys = 2, .pubkeys = conn_info_keys[0] },
	{ .conn_id = 1, .address = { "", 0 }, .since = 0 },
};
static const struct msg_conns_list conns_list_sample = {
	.total = 7, .count = 2, .conns = (struct msg_conn_info *)conn_info_sample
};
static const struct msg_conns_list conns_list_bare = { .total = 0 };
static const struct msg_conn_kick conn_kick_sample = {
	.conn_id = UINT64_MAX, .code = 1008, .reason = { "kicked by the operator", 22 }
};
static const struct msg_conn_kicked conn_kicked_sample = { .conn_id = 99, .found = true };

static int conns_ask_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_conns_ask *w = want;
	struct msg_conns_ask m;
	int err = msg_decode_conns_ask(body, len, &m);

	if (!err && w)
		ck_assert_uint_eq(m.max, w->max);
	return err;
}

static void assert_conn_info_eq(const struct msg_conn_info *got, const struct msg_conn_info *w,
				const uint8_t *body, size_t len)
{
	ck_assert_uint_eq(got->conn_id, w->conn_id);
	assert_msg_str(got->address, w->address, body, len);
	ck_assert_uint_eq(got->since, w->since);
	ck_assert_uint_eq(got->messages_in, w->messages_in);
	ck_assert_uint_eq(got->messages_out, w->messages_out);
	ck_assert_uint_eq(got->subscriptions, w->subscriptions);
	ck_assert_uint_eq(got->npubkeys, w->npubkeys);
	if (w->npubkeys) {
		ck_assert((const uint8_t *)got->pubkeys >= body);
		ck_assert((const uint8_t *)got->pubkeys + w->npubkeys * 32 <= body + len);
		assert_bytes_eq(got->pubkeys, w->pubkeys, (size_t)w->npubkeys * 32);
	} else {
		ck_assert_ptr_null(got->pubkeys);
	}
}

static int conns_list_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_conns_list *w = want;
	struct msg_conns_list m;
	int err = msg_decode_conns_list(body, len, &m);

	if (err) {
		ck_assert_ptr_null(m.conns);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.total, w->total);
		ck_assert_uint_eq(m.count, w->count);
		for (uint32_t i = 0; i < w->count; i++)
			assert_conn_info_eq(&m.conns[i], &w->conns[i], body, len);
	}
	msg_conns_list_release(&m);
	msg_conns_list_release(&m);
	return 0;
}

static int conn_kick_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_conn_kick *w = want;
	struct msg_conn_kick m;
	int err = msg_decode_conn_kick(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		ck_assert_uint_eq(m.code, w->code);
		assert_msg_str(m.reason, w->reason, body, len);
	}
	return err;
}

static int conn_kicked_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_conn_kicked *w = want;
	struct msg_conn_kicked m;
	int err = msg_decode_conn_kicked(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		ck_assert_int_eq(m.found, w->found);
	}
	return err;
}

static int conns_ask_encode(struct buf *out, const void *m)
{
	return msg_encode_conns_ask(out, &sample_header, m);
}

static int conns_list_encode(struct buf *out, const void *m)
{
	return msg_encode_conns_list(out, &sample_header, m);
}

static int conn_kick_encode(struct buf *out, const void *m)
{
	return msg_encode_conn_kick(out, &sample_header, m);
}

static int conn_kicked_encode(struct buf *out, const void *m)
{
	return msg_encode_conn_kicked(out, &sample_header, m);
}

static int neg_open_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_neg_open *w = want;
	struct msg_neg_open m;
	int err = msg_decode_neg_open(body, len, &m);

	if (err) {
		ck_assert_uint_eq(m.filter.nids, 0);
		return err;
	}
	if (w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
		assert_filter_eq(&m.filter, &w->filter);
		ck_assert_uint_eq(m.nviewers, w->nviewers);
		assert_bytes_eq(m.viewers, w->viewers, (size_t)w->nviewers * 32);
		assert_msg_str(m.message, w->message, body, len);
	}
	msg_neg_open_release(&m);
	msg_neg_open_release(&m);
	return 0;
}

static int neg_msg_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_neg_msg *w = want;
	struct msg_neg_msg m;
	int err = msg_decode_neg_msg(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
		assert_msg_str(m.message, w->message, body, len);
	}
	return err;
}

static int neg_close_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_neg_close *w = want;
	struct msg_neg_close m;
	int err = msg_decode_neg_close(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
	}
	return err;
}

static int neg_reply_decode(const uint8_t *body, size_t len, const void *want)
{
	const struct msg_neg_reply *w = want;
	struct msg_neg_reply m;
	int err = msg_decode_neg_reply(body, len, &m);

	if (!err && w) {
		ck_assert_uint_eq(m.conn_id, w->conn_id);
		assert_msg_str(m.sub_id, w->sub_id, body, len);
		ck_assert_uint_eq(m.status, w->status);
		assert_msg_str(m.payload, w->payload, body, len);
	}
	return err;
}

static int neg_open_encode(struct buf *out, const void *m)
{
	return msg_encode_neg_open(out, &sample_header, m);
}

static int neg_msg_encode(struct buf *out, const void *m)
{
	return msg_encode_neg_msg(out, &sample_header, m);
}

static int neg_close_encode(struct buf *out, const void *m)
{
	return msg_encode_neg_close(out, &sample_header, m);
}

static int neg_reply_encode(struct buf *out, const void *m)
{
	return msg_encode_neg_reply(out, &sample_header, m);
}

/* ---- the case table ---- */

static int hello_encode(struct buf *out, const void *m)
{
	return msg_encode_hello(out, &sample_header, m);
}

static int hello_ack_encode(struct buf *out, const void *m)
{
	return msg_encode_hello_ack(out, &sample_header, m);
}

static int event_store_encode(struct buf *out, const void *m)
{
	return msg_encode_event_store(out, &sample_header, m);
}

static int event_result_encode(struct buf *out, const void *m)
{
	return msg_encode_event_result(out, &sample_header, m);
}

static int event_results_encode(struct buf *out, const void *m)
{
	return msg_encode_event_results(out, &sample_header, m);
}

static int bundle_encode(struct buf *out, const void *m)
{
	return msg_encode_bundle(out, &sample_header, m);
}

static int sub_open_encode(struct buf *out, const void *m)
{
	return msg_encode_sub_open(out, &sample_header, m);
}

static int sub_replay_encode(struct buf *out, const void *m)
{
	return msg_encode_sub_replay(out, &sample_header, m);
}

static int query_events_encode(struct buf *out, const void *m)
{
	return msg_encode_query_events(out, &sample_header, m);
}

static int query_last_encode(struct buf *out, const void *m)
{
	return msg_encode_query_last(out, &sample_header, m);
}

static int query_done_encode(struct buf *out, const void *m)
{
	return msg_encode_query_done(out, &sample_header, m);
}

static int sub_close_encode(struct buf *out, const void *m)
{
	return msg_encode_sub_close(out, &sample_header, m);
}

static int conn_closed_encode(struct buf *out, const void *m)
{
	return msg_encode_conn_closed(out, &sample_header, m);
}

static int deliver_encode(struct buf *out, const void *m)
{
	return msg_encode_deliver(out, &sample_header, m);
}

static int worker_stats_encode(struct buf *out, const void *m)
{
	return msg_encode_worker_stats(out, &sample_header, m);
}

static int count_encode(struct buf *out, const void *m)
{
	return msg_encode_count(out, &sample_header, m);
}

static int count_result_encode(struct buf *out, const void *m)
{
	return msg_encode_count_result(out, &sample_header, m);
}

struct msg_case {
	const char *name;
	enum msg_type type;
	int (*encode)(struct buf *out, const void *m);
	decode_fn decode;
	const void *sample;
};

static const struct msg_case cases[] = {
	{ "hello", MSG_HELLO, hello_encode, hello_decode, &hello_sample },
	{ "hello_ack", MSG_HELLO_ACK, hello_ack_encode, hello_ack_decode, &hello_ack_sample },
	{ "event_store", MSG_EVENT_STORE, event_store_encode, event_store_decode,
	  &event_store_sample },
	{ "event_store bare", MSG_EVENT_STORE, event_store_encode, event_store_decode,
	  &event_store_bare },
	{ "event_result", MSG_EVENT_RESULT, event_result_encode, event_result_decode,
	  &event_result_sample },
	{ "event_result refused", MSG_EVENT_RESULT, event_result_encode, event_result_decode,
	  &event_result_refused },
	{ "event_results", MSG_EVENT_RESULTS, event_results_encode, event_results_decode,
	  &event_results_sample },
	{ "event_results bare", MSG_EVENT_RESULTS, event_results_encode, event_results_decode,
	  &event_results_bare },
	{ "bundle", MSG_BUNDLE, bundle_encode, bundle_decode, &bundle_sample },
	{ "bundle bare", MSG_BUNDLE, bundle_encode, bundle_decode, &bundle_bare },
	{ "sub_open", MSG_SUB_OPEN, sub_open_encode, sub_open_decode, &sub_open_sample },
	{ "sub_open bare", MSG_SUB_OPEN, sub_open_encode, sub_open_decode, &sub_open_bare },
	{ "sub_replay", MSG_SUB_REPLAY, sub_replay_encode, sub_replay_decode, &sub_replay_sample },
	{ "sub_replay bare", MSG_SUB_REPLAY, sub_replay_encode, sub_replay_decode,
	  &sub_replay_bare },
	{ "query_events", MSG_QUERY_EVENTS, query_events_encode, query_events_decode,
	  &query_events_sample },
	{ "query_events bare", MSG_QUERY_EVENTS, query_events_encode, query_events_decode,
	  &query_events_bare },
	{ "query_last", MSG_QUERY_LAST, query_last_encode, query_last_decode, &query_last_sample },
	{ "query_last bare", MSG_QUERY_LAST, query_last_encode, query_last_decode,
	  &query_last_bare },
	{ "query_done", MSG_QUERY_DONE, query_done_encode, query_done_decode, &query_done_sample },
	{ "query_done eose", MSG_QUERY_DONE, query_done_encode, query_done_decode,
	  &query_done_eose },
	{ "sub_close", MSG_SUB_CLOSE, sub_close_encode, sub_close_decode, &sub_close_sample },
	{ "conn_closed", MSG_CONN_CLOSED, conn_closed_encode, conn_closed_decode,
	  &conn_closed_sample },
	{ "deliver", MSG_DELIVER, deliver_encode, deliver_decode, &deliver_sample },
	{ "deliver bare", MSG_DELIVER, deliver_encode, deliver_decode, &deliver_bare },
	{ "worker_stats", MSG_WORKER_STATS, worker_stats_encode, worker_stats_decode,
	  &worker_stats_sample },
	{ "count", MSG_COUNT, count_encode, count_decode, &count_sample },
	{ "count bare", MSG_COUNT, count_encode, count_decode, &count_bare },
	{ "count_result", MSG_COUNT_RESULT, count_result_encode, count_result_decode,
	  &count_result_sample },
	{ "count_result refused", MSG_COUNT_RESULT, count_result_encode, count_result_decode,
	  &count_result_refused },
	{ "metrics", MSG_METRICS, metrics_encode, metrics_decode, &metrics_sample },
	{ "manage", MSG_MANAGE, manage_encode, manage_decode, &manage_sample },
	{ "policy", MSG_POLICY, policy_encode, policy_decode, &policy_sample },
	{ "policy bare", MSG_POLICY, policy_encode, policy_decode, &policy_bare },
	{ "manage_result", MSG_MANAGE_RESULT, manage_result_encode, manage_result_decode,
	  &manage_result_sample },
	{ "conns_ask", MSG_CONNS_ASK, conns_ask_encode, conns_ask_decode, &conns_ask_sample },
	{ "conns_list", MSG_CONNS_LIST, conns_list_encode, conns_list_decode, &conns_list_sample },
	{ "conns_list bare", MSG_CONNS_LIST, conns_list_encode, conns_list_decode,
	  &conns_list_bare },
	{ "conn_kick", MSG_CONN_KICK, conn_kick_encode, conn_kick_decode, &conn_kick_sample },
	{ "conn_kicked", MSG_CONN_KICKED, conn_kicked_encode, conn_kicked_decode,
	  &conn_kicked_sample },
	{ "neg_open", MSG_NEG_OPEN, neg_open_encode, neg_open_decode, &neg_open_sample },
	{ "neg_open bare", MSG_NEG_OPEN, neg_open_encode, neg_open_decode, &neg_open_bare },
	{ "neg_msg", MSG_NEG_MSG, neg_msg_encode, neg_msg_decode, &neg_msg_sample },
	{ "neg_close", MSG_NEG_CLOSE, neg_close_encode, neg_close_decode, &neg_close_sample },
	{ "neg_reply", MSG_NEG_REPLY, neg_reply_encode, neg_reply_decode, &neg_reply_sample },
	{ "neg_reply error", MSG_NEG_REPLY, neg_reply_encode, neg_reply_decode, &neg_reply_error },
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static decode_fn decoder_for(enum msg_type type)
{
	for (int i = 0; i < NCASES; i++)
		if (cases[i].type == type)
			return cases[i].decode;
	ck_abort_msg("no decoder for type %d", type);
	return NULL;
}

static void encode_case(const struct msg_case *c, struct buf *b)
{
	ck_assert_msg(c->encode(b, c->sample) == 0, "encoding %s", c->name);
	ck_assert_uint_ge(b->len, MSG_HEADER_LEN);
}

START_TEST(test_case_table_covers_every_type)
{
	for (int type = 1; type < MSG_TYPE_LIMIT; type++)
		ck_assert_ptr_nonnull(decoder_for(type));
}
END_TEST

START_TEST(test_round_trip)
{
	const struct msg_case *c = &cases[_i];
	struct buf b = BUF_INIT;
	struct msg_header h;

	encode_case(c, &b);
	ck_assert_int_eq(msg_decode_header(b.data, b.len, &h), 0);
	ck_assert_uint_eq(h.version, PROTO_VERSION);
	ck_assert_uint_eq(h.type, c->type);
	ck_assert_uint_eq(h.worker, sample_header.worker);
	ck_assert_uint_eq(h.request_id, sample_header.request_id);
	ck_assert_msg(c->decode(body_of(&b), body_len(&b), c->sample) == 0, "decoding %s", c->name);
	buf_free(&b);
}
END_TEST

/* A subscriber's topic is the first bytes the publisher's encoder writes. */
START_TEST(test_topic_is_encoded_prefix)
{
	const struct msg_case *c = &cases[_i];
	uint8_t topic[MSG_TOPIC_LEN];
	struct buf b = BUF_INIT;

	encode_case(c, &b);
	msg_topic(topic, c->type, sample_header.worker);
	ck_assert_msg(memcmp(b.data, topic, MSG_TOPIC_LEN) == 0, "topic of %s", c->name);
	buf_free(&b);
}
END_TEST

/* Encoders append: what was in the buffer stays, and the message follows. */
START_TEST(test_encode_appends)
{
	const struct msg_case *c = &cases[_i];
	struct buf alone = BUF_INIT, after = BUF_INIT;

	encode_case(c, &alone);
	buf_append(&after, "xyz", 3);
	encode_case(c, &after);
	ck_assert_uint_eq(after.len, alone.len + 3);
	ck_assert(memcmp(after.data, "xyz", 3) == 0);
	ck_assert(memcmp(after.data + 3, alone.data, alone.len) == 0);
	buf_free(&alone);
	buf_free(&after);
}
END_TEST

/* Every proper prefix of the body fails; none crashes. */
START_TEST(test_truncated_every_length)
{
	const struct msg_case *c = &cases[_i];
	struct buf b = BUF_INIT;

	encode_case(c, &b);
	for (size_t n = 0; n < body_len(&b); n++) {
		/* A copy of exactly n bytes, so ASan sees any read past it. */
		uint8_t *prefix = malloc(n ? n : 1);
		int err;

		memcpy(prefix, body_of(&b), n);
		err = c->decode(prefix, n, NULL);
		free(prefix);
		ck_assert_msg(err == ERR_TRUNC, "%s cut to %zu bytes: %d", c->name, n, err);
	}
	buf_free(&b);
}
END_TEST

START_TEST(test_trailing_byte)
{
	const struct msg_case *c = &cases[_i];
	struct buf b = BUF_INIT;

	encode_case(c, &b);
	buf_append_byte(&b, 0);
	ck_assert_int_eq(c->decode(body_of(&b), body_len(&b), NULL), ERR_TRAILING);
	b.data[b.len - 1] = (char)0xff;
	ck_assert_int_eq(c->decode(body_of(&b), body_len(&b), NULL), ERR_TRAILING);
	buf_free(&b);
}
END_TEST

START_TEST(test_wrong_version)
{
	static const uint8_t versions[] = { 0, PROTO_VERSION + 1, 0xff };
	const struct msg_case *c = &cases[_i];
	struct buf b = BUF_INIT;
	struct msg_header h;

	encode_case(c, &b);
	for (size_t i = 0; i < sizeof(versions); i++) {
		b.data[0] = (char)versions[i];
		ck_assert_int_eq(msg_decode_header(b.data, b.len, &h), ERR_VERSION);
		ck_assert_uint_eq(h.version, versions[i]);
	}
	buf_free(&b);
}
END_TEST

START_TEST(test_unknown_type)
{
	static const uint8_t types[] = { 0, MSG_TYPE_LIMIT, MSG_TYPE_LIMIT + 1, 0xff };
	const struct msg_case *c = &cases[_i];
	struct buf b = BUF_INIT;
	struct msg_header h;

	encode_case(c, &b);
	for (size_t i = 0; i < sizeof(types); i++) {
		b.data[1] = (char)types[i];
		ck_assert_int_eq(msg_decode_header(b.data, b.len, &h), ERR_TYPE);
	}
	buf_free(&b);
}
END_TEST

/* ---- header and names ---- */

START_TEST(test_header_truncated)
{
	struct buf b = BUF_INIT;
	struct msg_header h;

	msg_encode_conn_closed(&b, &sample_header, &conn_closed_sample);
	for (size_t n = 0; n < MSG_HEADER_LEN; n++)
		ck_assert_int_eq(msg_decode_header(b.data, n, &h), ERR_TRUNC);
	ck_assert_int_eq(msg_decode_header(b.data, MSG_HEADER_LEN, &h), 0);
	buf_free(&b);
}
END_TEST

/* Pins the byte layout: header, then the body fields big-endian. */
START_TEST(test_hello_golden_bytes)
{
	static const uint8_t want[] = {
		PROTO_VERSION, MSG_HELLO, 0x00, 0x07, 0xde, 0xad, 0xbe, 0xef,
		0x00, 0x00, 0x10, 0x92,
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
	};
	struct buf b = BUF_INIT;

	ck_assert_int_eq(msg_encode_hello(&b, &sample_header, &hello_sample), 0);
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert(memcmp(b.data, want, sizeof(want)) == 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_query_done_golden_bytes)
{
	static const uint8_t want[] = {
		PROTO_VERSION, MSG_QUERY_DONE, 0x00, 0x07, 0xde, 0xad, 0xbe, 0xef,
		0, 0, 0, 0, 0, 0, 0, 12,
		0xff, 0xff, 0xff, 0xff,
		MSG_QUERY_CLOSED,
		0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 15, 'e', 'r', 'r', 'o', 'r', ':', ' ', 't', 'o', 'o', ' ', 's', 'l', 'o', 'w',
	};
	struct buf b = BUF_INIT;

	ck_assert_int_eq(msg_encode_query_done(&b, &sample_header, &query_done_sample), 0);
	ck_assert_uint_eq(b.len, sizeof(want));
	ck_assert(memcmp(b.data, want, sizeof(want)) == 0);
	buf_free(&b);
}
END_TEST

/* The header's version and type come from the encoder, not the caller. */
START_TEST(test_encoder_writes_own_type)
{
	struct msg_header odd = { .version = 9, .type = MSG_DELIVER, .worker = 1, .request_id = 2 };
	struct buf b = BUF_INIT;
	struct msg_header h;

	ck_assert_int_eq(msg_encode_conn_closed(&b, &odd, &conn_closed_sample), 0);
	ck_assert_int_eq(msg_decode_header(b.data, b.len, &h), 0);
	ck_assert_uint_eq(h.version, PROTO_VERSION);
	ck_assert_uint_eq(h.type, MSG_CONN_CLOSED);
	buf_free(&b);
}
END_TEST

/* msg_header_for() gives what a spelled-out header gives, byte for byte. */
START_TEST(test_header_for_same_bytes)
{
	struct msg_header h = msg_header_for(sample_header.worker, sample_header.request_id);
	struct buf spelled = BUF_INIT, built = BUF_INIT;

	ck_assert_uint_eq(h.version, PROTO_VERSION);
	ck_assert_uint_eq(msg_version(), PROTO_VERSION);
	ck_assert_int_eq(msg_encode_sub_open(&spelled, &sample_header, &sub_open_sample), 0);
	ck_assert_int_eq(msg_encode_sub_open(&built, &h, &sub_open_sample), 0);
	ck_assert_uint_eq(built.len, spelled.len);
	ck_assert(memcmp(built.data, spelled.data, spelled.len) == 0);
	buf_free(&spelled);
	buf_free(&built);
}
END_TEST

/* Topics are byte-exact: a worker's DELIVER, and the broadcasts to all. */
START_TEST(test_topic_golden_bytes)
{
	const uint8_t deliver[MSG_TOPIC_LEN] = { PROTO_VERSION, MSG_DELIVER, 0x01, 0x02 };
	const uint8_t metrics[MSG_TOPIC_LEN] = { PROTO_VERSION, MSG_METRICS, 0xff, 0xff };
	struct msg_header all = { .worker = MSG_WORKER_ALL };
	uint8_t topic[MSG_TOPIC_LEN];
	struct buf b = BUF_INIT;

	msg_topic(topic, MSG_DELIVER, 0x0102);
	ck_assert(memcmp(topic, deliver, MSG_TOPIC_LEN) == 0);
	msg_topic(topic, MSG_METRICS, MSG_WORKER_ALL);
	ck_assert(memcmp(topic, metrics, MSG_TOPIC_LEN) == 0);
	ck_assert_int_eq(msg_encode_policy(&b, &all, &policy_sample), 0);
	msg_topic(topic, MSG_POLICY, MSG_WORKER_ALL);
	ck_assert(memcmp(b.data, topic, MSG_TOPIC_LEN) == 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_type_names)
{
	ck_assert_str_eq(msg_type_name(MSG_EVENT_STORE), "event_store");
	ck_assert_str_eq(msg_type_name(MSG_WORKER_STATS), "worker_stats");
	ck_assert_str_eq(msg_type_name(0), "unknown");
	ck_assert_str_eq(msg_type_name(-1), "unknown");
	ck_assert_str_eq(msg_type_name(MSG_TYPE_LIMIT), "unknown");
	for (int a = 1; a < MSG_TYPE_LIMIT; a++) {
		ck_assert_ptr_nonnull(msg_type_name(a));
		ck_assert_str_ne(msg_type_name(a), "unknown");
		for (int b = a + 1; b < MSG_TYPE_LIMIT; b++)
			ck_assert_str_ne(msg_type_name(a), msg_type_name(b));
	}
}
END_TEST

START_TEST(test_release_null_safe)
{
	msg_event_store_release(NULL);
	msg_sub_open_release(NULL);
	msg_query_events_release(NULL);
	msg_deliver_release(NULL);
}
END_TEST

/* ---- hand-built bodies ---- */

/* Caps the address space a little above what the process uses, so an
 * allocation sized from a bogus count fails.  ASan reserves terabytes of
 * shadow memory up front, so under ASan this does nothing. */
static void limit_address_space(void)
{
#ifndef UNDER_ASAN
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	struct rlimit lim;
	rlim_t want;

	if (!f)
		return;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	if (!pages)
		return;
	/* Only the soft limit moves, so this also works unforked and unprivileged. */
	ck_assert_int_eq(getrlimit(RLIMIT_AS, &lim), 0);
	want = (rlim_t)pages * 4096 + (256u << 20);
	if (lim.rlim_max == RLIM_INFINITY || want < lim.rlim_max)
		lim.rlim_cur = want;
	ck_assert_int_eq(setrlimit(RLIMIT_AS, &lim), 0);
#endif
}

static void assert_err(int got, int want, const char *what)
{
	if (want == ANY_ERROR)
		ck_assert_msg(got < 0, "%s: decoded, expected an error", what);
	else
		ck_assert_msg(got == want, "%s: got %d, expected %d", what, got, want);
}

/*
 * A SUB_OPEN body with one filter whose every byte is chosen by the test.
 * Each list is written with its declared count but only min(count, written)
 * items, so a count can lie; written 0 means "as many as declared".
 */
struct raw_filter {
	uint8_t has_ids, has_authors, has_kinds, has_limit, has_search;
	uint32_t nids, nauthors, nkinds, ntags, nvalues;
	uint32_t written;
	const char *tag_names; /* one letter per tag written */
	uint32_t limit;
	const char *search;
	uint32_t search_len;
};

static uint32_t raw_items(const struct raw_filter *f, uint32_t declared)
{
	return f->written && f->written < declared ? f->written : declared;
}

static void raw_put_tags(struct buf *b, const struct raw_filter *f)
{
	uint32_t ntags = raw_items(f, f->ntags);

	wire_put_u32(b, f->ntags);
	for (uint32_t i = 0; i < ntags && f->tag_names[i]; i++) {
		wire_put_u8(b, (uint8_t)f->tag_names[i]);
		wire_put_u32(b, f->nvalues);
		for (uint32_t j = 0; j < raw_items(f, f->nvalues); j++)
			wire_put_str(b, "v", 1);
	}
}

static void raw_put_filter(struct buf *b, const struct raw_filter *f)
{
	static const uint8_t key[32];

	wire_put_u8(b, f->has_ids);
	wire_put_u32(b, f->nids);
	for (uint32_t i = 0; i < raw_items(f, f->nids); i++)
		wire_put_raw(b, key, 32);
	wire_put_u8(b, f->has_authors);
	wire_put_u32(b, f->nauthors);
	for (uint32_t i = 0; i < raw_items(f, f->nauthors); i++)
		wire_put_raw(b, key, 32);
	wire_put_u8(b, f->has_kinds);
	wire_put_u32(b, f->nkinds);
	for (uint32_t i = 0; i < raw_items(f, f->nkinds); i++)
		wire_put_u32(b, i);
	raw_put_tags(b, f);
	wire_put_i64(b, INT64_MIN);
	wire_put_i64(b, INT64_MAX);
	wire_put_u8(b, f->has_limit);
	wire_put_u32(b, f->limit);
	wire_put_u8(b, f->has_search);
	if (f->has_search)
		wire_put_str(b, f->search, f->search_len);
}

static void raw_put_sub_open_start(struct buf *b, const char *sub_id, uint32_t sub_id_len,
				   uint8_t flags, uint32_t nfilters)
{
	wire_put_u64(b, 1);
	wire_put_u32(b, 2);
	wire_put_str(b, sub_id, sub_id_len);
	wire_put_u8(b, flags);
	wire_put_u64(b, 0);
	wire_put_u32(b, nfilters);
}

static const struct {
	const char *name;
	struct raw_filter f;
	int err;
} raw_filters[] = {
	{ "minimal", { .tag_names = "" }, 0 },
	{ "every field",
	  { .has_ids = 1, .nids = 2, .has_authors = 1, .nauthors = 1, .has_kinds = 1, .nkinds = 3,
	    .ntags = 2, .tag_names = "aZ", .nvalues = 2, .has_limit = 1, .limit = 5,
	    .has_search = 1, .search = "q", .search_len = 1 },
	  0 },
	{ "empty search", { .tag_names = "", .has_search = 1, .search = "", .search_len = 0 }, 0 },
	{ "52 tags", { .ntags = 52, .tag_names = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" },
	  0 },
	{ "has_ids 2", { .has_ids = 2, .tag_names = "" }, ERR_INVAL },
	{ "has_authors 2", { .has_authors = 2, .tag_names = "" }, ERR_INVAL },
	{ "has_kinds 2", { .has_kinds = 2, .tag_names = "" }, ERR_INVAL },
	{ "has_limit 2", { .has_limit = 2, .tag_names = "" }, ERR_INVAL },
	{ "has_search 2",
	  { .has_search = 2, .search = "q", .search_len = 1, .tag_names = "" }, ERR_INVAL },
	{ "absent ids counted", { .nids = 1, .tag_names = "" }, ERR_INVAL },
	{ "absent authors counted", { .nauthors = 1, .tag_names = "" }, ERR_INVAL },
	{ "absent kinds counted", { .nkinds = 1, .tag_names = "" }, ERR_INVAL },
	{ "absent limit nonzero", { .limit = 5, .tag_names = "" }, ERR_INVAL },
	{ "tag name digit", { .ntags = 1, .tag_names = "1" }, ERR_INVAL },
	{ "tag name hash", { .ntags = 1, .tag_names = "#" }, ERR_INVAL },
	{ "tag name high byte", { .ntags = 1, .tag_names = "\xc3" }, ERR_INVAL },
	{ "duplicate tag", { .ntags = 2, .tag_names = "ee" }, ERR_INVAL },
	{ "53 tags",
	  { .ntags = 53, .tag_names = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZa" },
	  ERR_INVAL },
	{ "search with NUL",
	  { .tag_names = "", .has_search = 1, .search = "a\0b", .search_len = 3 }, ERR_INVAL },
	{ "huge nids", { .has_ids = 1, .nids = UINT32_MAX, .written = 1, .tag_names = "" },
	  ERR_TRUNC },
	{ "huge nauthors",
	  { .has_authors = 1, .nauthors = 0x80000000u, .written = 1, .tag_names = "" }, ERR_TRUNC },
	{ "huge nkinds", { .has_kinds = 1, .nkinds = UINT32_MAX, .written = 1, .tag_names = "" },
	  ERR_TRUNC },
	{ "huge ntags", { .ntags = UINT32_MAX, .written = 1, .tag_names = "a" }, ERR_TRUNC },
	{ "huge nvalues",
	  { .ntags = 1, .nvalues = UINT32_MAX, .written = 1, .tag_names = "a" }, ERR_TRUNC },
	{ "nvalues 1<<28", { .ntags = 1, .nvalues = 1u << 28, .written = 1, .tag_names = "a" },
	  ERR_TRUNC },
	{ "nids one too many", { .has_ids = 1, .nids = 3, .written = 2, .tag_names = "" },
	  ANY_ERROR },
	{ "nkinds one too many", { .has_kinds = 1, .nkinds = 3, .written = 2, .tag_names = "" },
	  ANY_ERROR },
};
#define NRAW_FILTERS ((int)(sizeof(raw_filters) / sizeof(raw_filters[0])))

START_TEST(test_raw_filter)
{
	struct buf b = BUF_INIT;

	limit_address_space();
	raw_put_sub_open_start(&b, "s", 1, 0, 1);
	raw_put_filter(&b, &raw_filters[_i].f);
	wire_put_u32(&b, 0); /* no viewers */
	assert_err(sub_open_decode((const uint8_t *)b.data, b.len, NULL), raw_filters[_i].err,
		   raw_filters[_i].name);
	buf_free(&b);
}
END_TEST

START_TEST(test_huge_search_length)
{
	struct buf b = BUF_INIT;
	struct raw_filter f = { .tag_names = "" };

	raw_put_sub_open_start(&b, "s", 1, 0, 1);
	raw_put_filter(&b, &f);
	b.data[b.len - 1] = 1; /* has_search, then a length that is not there */
	wire_put_u32(&b, UINT32_MAX);
	wire_put_raw(&b, "abc", 3);
	ck_assert_int_eq(sub_open_decode((const uint8_t *)b.data, b.len, NULL), ERR_TRUNC);
	buf_free(&b);
}
END_TEST

START_TEST(test_sub_open_fields)
{
	char id65[MSG_SUB_ID_MAX + 1];
	memset(id65, 'x', sizeof(id65));
	static const struct {
		const char *sub_id;
		uint32_t len;
		uint8_t flags;
		int err;
	} rows[] = {
		{ "a", 1, MSG_SUB_HISTORY, 0 },
		{ NULL, MSG_SUB_ID_MAX, 0, 0 },
		{ "", 0, 0, ERR_INVAL },
		{ NULL, MSG_SUB_ID_MAX + 1, 0, ERR_INVAL },
		{ "a", 1, MSG_SUB_RESUME, 0 },
		{ "a", 1, MSG_SUB_HISTORY | MSG_SUB_RESUME, ERR_INVAL },
		{ "a", 1, 4, ERR_INVAL },
		{ "a", 1, 0x81, ERR_INVAL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf b = BUF_INIT;

		raw_put_sub_open_start(&b, rows[i].sub_id ? rows[i].sub_id : id65, rows[i].len,
				       rows[i].flags, 0);
		wire_put_u32(&b, 0); /* no viewers */
		ck_assert_int_eq(sub_open_decode((const uint8_t *)b.data, b.len, NULL), rows[i].err);
		buf_free(&b);
	}
}
END_TEST

/* At most MSG_VIEWERS_MAX viewers, each 32 bytes, all of them there. */
START_TEST(test_sub_open_viewers)
{
	static const struct {
		uint32_t declared, written;
		int err;
	} rows[] = {
		{ 0, 0, 0 },
		{ 1, 1, 0 },
		{ MSG_VIEWERS_MAX, MSG_VIEWERS_MAX, 0 },
		{ MSG_VIEWERS_MAX + 1, MSG_VIEWERS_MAX + 1, ERR_INVAL },
		{ UINT32_MAX, 1, ERR_INVAL },
		{ 2, 1, ERR_TRUNC },
	};
	static const uint8_t key[32] = { 7 };
	struct msg_sub_open many = sub_open_sample;
	struct buf out = BUF_INIT;

	/* The encoder refuses what the decoder would, and writes nothing. */
	many.nviewers = MSG_VIEWERS_MAX + 1;
	ck_assert_int_eq(msg_encode_sub_open(&out, &sample_header, &many), ERR_INVAL);
	ck_assert_uint_eq(out.len, 0);
	buf_free(&out);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf b = BUF_INIT;

		raw_put_sub_open_start(&b, "s", 1, MSG_SUB_HISTORY, 0);
		wire_put_u32(&b, rows[i].declared);
		for (uint32_t k = 0; k < rows[i].written; k++)
			wire_put_raw(&b, key, sizeof(key));
		ck_assert_msg(sub_open_decode((const uint8_t *)b.data, b.len, NULL) == rows[i].err,
			      "row %zu", i);
		buf_free(&b);
	}
}
END_TEST

/* A replay asks for the commits strictly between after and before. */
START_TEST(test_sub_replay_range)
{
	static const struct {
		uint64_t after, before;
		int err;
	} rows[] = {
		{ 0, 2, 0 },
		{ 5, 7, 0 },
		{ 5, 6, ERR_INVAL },
		{ 5, 5, ERR_INVAL },
		{ 7, 5, ERR_INVAL },
		{ UINT64_MAX - 1, UINT64_MAX, ERR_INVAL },
		{ UINT64_MAX, 0, ERR_INVAL },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct msg_sub_replay m = { .conn_id = 1, .sub_serial = 2, .after = rows[i].after,
					    .before = rows[i].before };
		struct buf b = BUF_INIT;

		ck_assert_int_eq(msg_encode_sub_replay(&b, &sample_header, &m), 0);
		ck_assert_int_eq(sub_replay_decode((const uint8_t *)b.data + MSG_HEADER_LEN,
						   b.len - MSG_HEADER_LEN, NULL), rows[i].err);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_sub_close_sub_id_bounds)
{
	char id65[MSG_SUB_ID_MAX + 1];
	memset(id65, 'x', sizeof(id65));
	static const uint32_t lens[] = { 0, 1, MSG_SUB_ID_MAX, MSG_SUB_ID_MAX + 1 };
	static const int errs[] = { ERR_INVAL, 0, 0, ERR_INVAL };

	for (size_t i = 0; i < 4; i++) {
		struct buf b = BUF_INIT;

		wire_put_u64(&b, 1);
		wire_put_str(&b, id65, lens[i]);
		ck_assert_int_eq(sub_close_decode((const uint8_t *)b.data, b.len, NULL), errs[i]);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_sub_open_huge_nfilters)
{
	static const uint32_t counts[] = { UINT32_MAX, 0x80000000u, 1u << 24, 2 };
	struct raw_filter f = { .tag_names = "" };

	limit_address_space();
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		struct buf b = BUF_INIT;

		raw_put_sub_open_start(&b, "s", 1, 0, counts[i]);
		raw_put_filter(&b, &f);
		ck_assert_int_eq(sub_open_decode((const uint8_t *)b.data, b.len, NULL), ERR_TRUNC);
		buf_free(&b);
	}
}
END_TEST

/* EVENT_STORE with chosen kind, tag names, a tag count that may lie and
 * a source address of source_len bytes. */
static void raw_put_event_store_from(struct buf *b, uint32_t kind, uint32_t ntags,
				     const char *names, uint32_t source_len)
{
	static const char address[MSG_SOURCE_MAX + 2] = "203.0.113.9";

	static const uint8_t zeros[64];

	wire_put_u64(b, 1);
	wire_put_raw(b, zeros, EVENT_ID_LEN);
	wire_put_raw(b, zeros, EVENT_PUBKEY_LEN);
	wire_put_raw(b, zeros, EVENT_SIG_LEN);
	wire_put_i64(b, 1700000000);
	wire_put_u32(b, kind);
	wire_put_i64(b, 0);
	wire_put_u32(b, 0);
	wire_put_str(b, "", 0);
	wire_put_u32(b, ntags);
	for (const char *n = names; *n; n++) {
		wire_put_u8(b, (uint8_t)*n);
		wire_put_str(b, "v", 1);
	}
	wire_put_str(b, "{}", 2);
	wire_put_str(b, address, source_len);
}

static void raw_put_event_store(struct buf *b, uint32_t kind, uint32_t ntags, const char *names)
{
	raw_put_event_store_from(b, kind, ntags, names, 0);
}

/* The source address is at most MSG_SOURCE_MAX bytes. */
START_TEST(test_event_store_source_bound)
{
	static const uint32_t lens[] = { 0, 11, MSG_SOURCE_MAX, MSG_SOURCE_MAX + 1 };
	static const int errs[] = { 0, 0, 0, ERR_INVAL };

	for (size_t i = 0; i < 4; i++) {
		struct buf b = BUF_INIT;

		raw_put_event_store_from(&b, 1, 0, "", lens[i]);
		ck_assert_int_eq(event_store_decode((const uint8_t *)b.data, b.len, NULL), errs[i]);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_event_store_fields)
{
	static const struct {
		uint32_t kind;
		uint32_t ntags;
		const char *names;
		int err;
	} rows[] = {
		{ 0, 0, "", 0 },
		{ EVENT_KIND_MAX, 2, "eP", 0 },
		{ EVENT_KIND_MAX + 1, 0, "", ERR_INVAL },
		{ UINT32_MAX, 0, "", ERR_INVAL },
		{ 1, 1, "1", ERR_INVAL },
		{ 1, 1, "-", ERR_INVAL },
		{ 1, 2, "a\x7f", ERR_INVAL },
		{ 1, 1, "\xe9", ERR_INVAL },
		{ 1, 3, "ab", ANY_ERROR },
		{ 1, UINT32_MAX, "a", ERR_TRUNC },
		{ 1, 0x40000000u, "a", ERR_TRUNC },
	};

	limit_address_space();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf b = BUF_INIT;
		char what[32];

		snprintf(what, sizeof(what), "row %zu", i);
		raw_put_event_store(&b, rows[i].kind, rows[i].ntags, rows[i].names);
		assert_err(event_store_decode((const uint8_t *)b.data, b.len, NULL), rows[i].err, what);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_event_result_accepted_byte)
{
	struct buf b = BUF_INIT;
	uint8_t *body;

	msg_encode_event_result(&b, &sample_header, &event_result_sample);
	body = (uint8_t *)b.data + MSG_HEADER_LEN;
	body[8 + EVENT_ID_LEN] = 0;
	ck_assert_int_eq(event_result_decode(body, body_len(&b), NULL), 0);
	body[8 + EVENT_ID_LEN] = 2;
	ck_assert_int_eq(event_result_decode(body, body_len(&b), NULL), ERR_INVAL);
	body[8 + EVENT_ID_LEN] = 0xff;
	ck_assert_int_eq(event_result_decode(body, body_len(&b), NULL), ERR_INVAL);
	buf_free(&b);
}
END_TEST

START_TEST(test_query_done_status_byte)
{
	struct buf b = BUF_INIT;
	uint8_t *body;

	msg_encode_query_done(&b, &sample_header, &query_done_sample);
	body = (uint8_t *)b.data + MSG_HEADER_LEN;
	body[12] = 2;
	ck_assert_int_eq(query_done_decode(body, body_len(&b), NULL), ERR_INVAL);
	body[12] = 0x80;
	ck_assert_int_eq(query_done_decode(body, body_len(&b), NULL), ERR_INVAL);
	body[12] = MSG_QUERY_EOSE;
	ck_assert_int_eq(query_done_decode(body, body_len(&b), NULL), 0);
	buf_free(&b);
}
END_TEST

START_TEST(test_query_events_counts)
{
	/* count, strings actually written, expected */
	static const uint32_t rows[][3] = {
		{ 2, 2, 0 }, { 3, 2, 1 }, { UINT32_MAX, 1, 1 }, { 0x40000000u, 1, 1 }, { 1, 0, 1 },
	};

	limit_address_space();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf b = BUF_INIT;
		int err;

		wire_put_u64(&b, 1);
		wire_put_u32(&b, 2);
		wire_put_u32(&b, rows[i][0]);
		for (uint32_t j = 0; j < rows[i][1]; j++)
			wire_put_str(&b, "{}", 2);
		err = query_events_decode((const uint8_t *)b.data, b.len, NULL);
		ck_assert_int_eq(err, rows[i][2] ? ERR_TRUNC : 0);
		buf_free(&b);
	}
}
END_TEST

START_TEST(test_deliver_counts)
{
	static const uint32_t rows[][3] = {
		{ 2, 2, 0 }, { 3, 2, 1 }, { UINT32_MAX, 1, 1 }, { 0x20000000u, 1, 1 }, { 1, 0, 1 },
	};

	limit_address_space();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct buf b = BUF_INIT;
		int err;

		wire_put_u64(&b, 1);
		wire_put_u64(&b, 42);
		wire_put_u64(&b, 0); /* expiration */
		wire_put_str(&b, "{}", 2);
		wire_put_u32(&b, rows[i][0]);
		for (uint32_t j = 0; j < rows[i][1]; j++) {
			wire_put_u64(&b, j);
			wire_put_u32(&b, j);
		}
		err = deliver_decode((const uint8_t *)b.data, b.len, NULL);
		ck_assert_int_eq(err, rows[i][2] ? ERR_TRUNC : 0);
		buf_free(&b);
	}
}
END_TEST

/* A failed decode leaves the message zeroed: nothing to release. */
START_TEST(test_failed_decode_is_empty)
{
	struct buf b = BUF_INIT;
	struct msg_sub_open m;

	msg_encode_sub_open(&b, &sample_header, &sub_open_sample);
	ck_assert_int_eq(msg_decode_sub_open(body_of(&b), body_len(&b) - 1, &m), ERR_TRUNC);
	ck_assert_uint_eq(m.conn_id, 0);
	ck_assert_ptr_null(m.filters);
	ck_assert_uint_eq(m.nfilters, 0);
	ck_assert_ptr_null(m.sub_id.ptr);
	buf_free(&b);
}
END_TEST

/* ---- seeded random SUB_OPEN round trips ---- */

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1DULL;
}

static uint32_t rng_below(uint32_t n)
{
	return (uint32_t)(rng_next() % n);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(p);
	return p;
}

static void random_bytes(void *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)out)[i] = (uint8_t)rng_next();
}

static char *random_value(uint32_t *len)
{
	char *v;

	*len = rng_below(12);
	v = xmalloc(*len + 1);
	random_bytes(v, *len);
	v[*len] = '\0';
	return v;
}

static void random_tag(struct filter_tag *t, char name)
{
	t->name = name;
	t->nvalues = rng_below(4);
	t->values = xmalloc(t->nvalues * sizeof(char *));
	t->lens = xmalloc(t->nvalues * sizeof(uint32_t));
	for (uint32_t i = 0; i < t->nvalues; i++)
		t->values[i] = random_value(&t->lens[i]);
}

static void random_tags(struct filter *f)
{
	static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
	uint32_t first = rng_below(52);

	f->ntags = rng_below(5);
	f->tags = f->ntags ? xmalloc(f->ntags * sizeof(*f->tags)) : NULL;
	for (uint32_t i = 0; i < f->ntags; i++)
		random_tag(&f->tags[i], letters[(first + i * 7) % 52]);
}

static void random_keys(bool *has, uint32_t *n, void **keys)
{
	*has = rng_below(2);
	*n = *has ? rng_below(5) : 0;
	*keys = *n ? xmalloc((size_t)*n * 32) : NULL;
	random_bytes(*keys, (size_t)*n * 32);
}

static char *random_search(void)
{
	uint32_t len = rng_below(16);
	char *s = xmalloc(len + 1);

	for (uint32_t i = 0; i < len; i++)
		s[i] = (char)(' ' + rng_below(95));
	s[len] = '\0';
	return s;
}

static void random_filter(struct filter *f)
{
	void *ids, *authors;

	filter_init(f);
	random_keys(&f->has_ids, &f->nids, &ids);
	random_keys(&f->has_authors, &f->nauthors, &authors);
	f->ids = ids;
	f->authors = authors;
	f->has_kinds = rng_below(2);
	f->nkinds = f->has_kinds ? rng_below(6) : 0;
	f->kinds = f->nkinds ? xmalloc(f->nkinds * sizeof(uint32_t)) : NULL;
	for (uint32_t i = 0; i < f->nkinds; i++)
		f->kinds[i] = rng_below(3) ? rng_below(70000) : (uint32_t)rng_next();
	random_tags(f);
	if (rng_below(2))
		f->since = (int64_t)rng_next();
	if (rng_below(2))
		f->until = (int64_t)rng_next();
	f->has_limit = rng_below(2);
	f->limit = f->has_limit ? (uint32_t)rng_next() : 0;
	f->search = rng_below(4) ? NULL : random_search();
}

static void random_sub_open(struct msg_sub_open *m, char *sub_id)
{
	m->conn_id = rng_next();
	m->sub_serial = (uint32_t)rng_next();
	m->sub_id.len = 1 + rng_below(64);
	random_bytes(sub_id, m->sub_id.len);
	m->sub_id.ptr = sub_id;
	m->flags = (uint8_t)rng_below(3);
	m->resume_after = m->flags == MSG_SUB_RESUME ? rng_next() : 0;
	m->nfilters = rng_below(9);
	m->filters = m->nfilters ? xmalloc(m->nfilters * sizeof(struct filter)) : NULL;
	for (uint32_t i = 0; i < m->nfilters; i++)
		random_filter(&m->filters[i]);
	m->nviewers = rng_below(MSG_VIEWERS_MAX + 1);
	random_bytes(m->viewers, sizeof(m->viewers));
}

/* Decodes, compares, re-encodes (the bytes must be identical), and checks
 * one random cut and a trailing byte. */
static void check_random_sub_open(const struct msg_sub_open *m)
{
	struct buf b = BUF_INIT, again = BUF_INIT;
	struct msg_sub_open got;
	size_t cut;

	ck_assert_int_eq(msg_encode_sub_open(&b, &sample_header, m), 0);
	ck_assert_int_eq(sub_open_decode(body_of(&b), body_len(&b), m), 0);
	ck_assert_int_eq(msg_decode_sub_open(body_of(&b), body_len(&b), &got), 0);
	ck_assert_int_eq(msg_encode_sub_open(&again, &sample_header, &got), 0);
	ck_assert_uint_eq(again.len, b.len);
	ck_assert(memcmp(again.data, b.data, b.len) == 0);
	msg_sub_open_release(&got);
	cut = rng_below((uint32_t)body_len(&b));
	ck_assert_int_eq(sub_open_decode(body_of(&b), cut, NULL), ERR_TRUNC);
	buf_append_byte(&b, (char)rng_next());
	ck_assert_int_eq(sub_open_decode(body_of(&b), body_len(&b), NULL), ERR_TRAILING);
	buf_free(&b);
	buf_free(&again);
}

START_TEST(test_random_sub_open)
{
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int round = 0; round < 500; round++) {
		struct msg_sub_open m;
		char sub_id[64];

		random_sub_open(&m, sub_id);
		check_random_sub_open(&m);
		msg_sub_open_release(&m);
	}
}
END_TEST

static void add_case_loop(TCase *tc, const TTest *test)
{
	tcase_add_loop_test(tc, test, 0, NCASES);
}

/* The reply socket's name carries the worker and the full boot id, so two
 * incarnations of a worker never share one; the longest fits the buffer. */
/* A bundle of more than MSG_BUNDLE_MAX parts, or with a part too short to
 * hold a header, is refused. */
/* msg_conn_info_len() is what each entry adds to the body. */
START_TEST(test_conn_info_len)
{
	struct msg_conns_list one = { .total = 1, .count = 1 };
	struct buf a = BUF_INIT, b = BUF_INIT;

	for (int i = 0; i < 2; i++) {
		one.conns = (struct msg_conn_info *)&conn_info_sample[i];
		ck_assert_int_eq(msg_encode_conns_list(&a, &sample_header, &conns_list_bare), 0);
		ck_assert_int_eq(msg_encode_conns_list(&b, &sample_header, &one), 0);
		ck_assert_uint_eq(b.len - a.len, msg_conn_info_len(&conn_info_sample[i]));
		buf_reset(&a);
		buf_reset(&b);
	}
	buf_free(&a);
	buf_free(&b);
}
END_TEST

/* What a decoder would refuse, its encoder refuses; hand-built bodies
 * with more listed than total, 9 pubkeys or a bad close code fail. */
START_TEST(test_conns_refusals)
{
	struct msg_conn_info nine = conn_info_sample[0];
	struct msg_conns_list over = { .total = 1, .count = 2,
				       .conns = (struct msg_conn_info *)conn_info_sample };
	struct msg_conns_list list = { .total = 1, .count = 1, .conns = &nine };
	struct msg_conn_kick kick = conn_kick_sample;
	struct msg_conns_list m;
	struct msg_conn_kick k;
	struct buf b = BUF_INIT;

	ck_assert_int_eq(msg_encode_conns_list(&b, &sample_header, &over), ERR_INVAL);
	ck_assert_uint_eq(b.len, 0);
	nine.npubkeys = MSG_VIEWERS_MAX + 1;
	ck_assert_int_eq(msg_encode_conns_list(&b, &sample_header, &list), ERR_INVAL);
	kick.code = 999;
	ck_assert_int_eq(msg_encode_conn_kick(&b, &sample_header, &kick), ERR_INVAL);
	kick.code = 1000;
	kick.reason.len = MSG_CLOSE_REASON_MAX + 1;
	ck_assert_int_eq(msg_encode_conn_kick(&b, &sample_header, &kick), ERR_INVAL);
	ck_assert_uint_eq(b.len, 0);
	/* total 1, count 2: the count fits the bytes but not the total */
	ck_assert_int_eq(msg_encode_conns_list(&b, &sample_header, &conns_list_sample), 0);
	b.data[MSG_HEADER_LEN + 3] = 1;
	ck_assert_int_eq(msg_decode_conns_list(body_of(&b), body_len(&b), &m), ERR_INVAL);
	ck_assert_ptr_null(m.conns);
	buf_reset(&b);
	/* npubkeys 9 (byte 8+4+12+8+8+8+4 of the first entry) */
	list.total = 1;
	nine.npubkeys = 0;
	ck_assert_int_eq(msg_encode_conns_list(&b, &sample_header, &list), 0);
	b.data[MSG_HEADER_LEN + 8 + 8 + 4 + 12 + 8 + 8 + 8 + 4] = MSG_VIEWERS_MAX + 1;
	ck_assert_int_eq(msg_decode_conns_list(body_of(&b), body_len(&b), &m), ERR_INVAL);
	buf_reset(&b);
	ck_assert_int_eq(msg_encode_conn_kick(&b, &sample_header, &conn_kick_sample), 0);
	b.data[MSG_HEADER_LEN + 8] = 0; /* code 0x00f0 */
	ck_assert_int_eq(msg_decode_conn_kick(body_of(&b), body_len(&b), &k), ERR_INVAL);
	buf_free(&b);
}
END_TEST

START_TEST(test_bundle_limits)
{
	struct msg_str parts[MSG_BUNDLE_MAX + 1];
	struct msg_bundle in = { MSG_BUNDLE_MAX + 1, parts }, out;
	struct buf b = BUF_INIT;

	for (int i = 0; i <= MSG_BUNDLE_MAX; i++)
		parts[i] = (struct msg_str){ "12345678", 8 };
	ck_assert_int_eq(msg_encode_bundle(&b, &sample_header, &in), 0);
	ck_assert_int_eq(msg_decode_bundle(b.data + MSG_HEADER_LEN, b.len - MSG_HEADER_LEN, &out),
			 ERR_INVAL);
	buf_free(&b);
	in.count = MSG_BUNDLE_MAX;
	ck_assert_int_eq(msg_encode_bundle(&b, &sample_header, &in), 0);
	ck_assert_int_eq(msg_decode_bundle(b.data + MSG_HEADER_LEN, b.len - MSG_HEADER_LEN, &out), 0);
	ck_assert_uint_eq(out.count, MSG_BUNDLE_MAX);
	msg_bundle_release(&out);
	buf_free(&b);
	/* Three parts of 7, 20 and 8 bytes: the count fits the body, the first
	 * part cannot hold a header. */
	parts[0].len = 7;
	parts[1] = (struct msg_str){ "12345678901234567890", 20 };
	in.count = 3;
	ck_assert_int_eq(msg_encode_bundle(&b, &sample_header, &in), 0);
	ck_assert_int_eq(msg_decode_bundle(b.data + MSG_HEADER_LEN, b.len - MSG_HEADER_LEN, &out),
			 ERR_INVAL);
	buf_free(&b);
}
END_TEST

/* A negentropy message is never empty; a reply's status is 0 or 1. */
START_TEST(test_neg_bounds)
{
	struct msg_neg_msg empty = { 1, { "s", 1 }, { "", 0 } };
	struct msg_neg_reply bad = neg_reply_sample;
	struct buf b = BUF_INIT;

	ck_assert_int_eq(msg_encode_neg_msg(&b, &sample_header, &empty), ERR_INVAL);
	ck_assert_uint_eq(b.len, 0);
	bad.status = 2;
	ck_assert_int_eq(msg_encode_neg_reply(&b, &sample_header, &bad), ERR_INVAL);
	ck_assert_int_eq(msg_encode_neg_reply(&b, &sample_header, &neg_reply_sample), 0);
	b.data[MSG_HEADER_LEN + 8 + 4 + 5] = 2; /* the status byte */
	ck_assert_int_eq(neg_reply_decode(body_of(&b), body_len(&b), NULL), ERR_INVAL);
	buf_free(&b);
}
END_TEST

START_TEST(test_reply_socket_name)
{
	char a[MSG_REPLY_SOCKET_NAME_MAX], b[MSG_REPLY_SOCKET_NAME_MAX];

	msg_reply_socket_name(a, 1, UINT64_C(0x0123456789abcdef));
	ck_assert_str_eq(a, "relayd-1-0123456789abcdef.ipc");
	msg_reply_socket_name(b, 1, UINT64_C(0x0123456789abcdee));
	ck_assert_str_ne(a, b);
	msg_reply_socket_name(a, 65535, UINT64_MAX);
	ck_assert_str_eq(a, "relayd-65535-ffffffffffffffff.ipc");
	ck_assert_uint_lt(strlen(a) + 1, MSG_REPLY_SOCKET_NAME_MAX);
}
END_TEST

static Suite *msg_suite(void)
{
	Suite *s = suite_create("msg");
	TCase *each = tcase_create("every message");
	TCase *fixed = tcase_create("header and names");
	TCase *raw = tcase_create("hand-built bodies");
	TCase *random = tcase_create("random");

	tcase_add_test(each, test_case_table_covers_every_type);
	add_case_loop(each, test_round_trip);
	add_case_loop(each, test_encode_appends);
	add_case_loop(each, test_truncated_every_length);
	add_case_loop(each, test_trailing_byte);
	add_case_loop(each, test_wrong_version);
	add_case_loop(each, test_unknown_type);
	add_case_loop(each, test_topic_is_encoded_prefix);
	suite_add_tcase(s, each);

	tcase_add_test(fixed, test_header_truncated);
	tcase_add_test(fixed, test_hello_golden_bytes);
	tcase_add_test(fixed, test_query_done_golden_bytes);
	tcase_add_test(fixed, test_encoder_writes_own_type);
	tcase_add_test(fixed, test_topic_golden_bytes);
	tcase_add_test(fixed, test_header_for_same_bytes);
	tcase_add_test(fixed, test_type_names);
	tcase_add_test(fixed, test_release_null_safe);
	suite_add_tcase(s, fixed);

	tcase_add_loop_test(raw, test_raw_filter, 0, NRAW_FILTERS);
	tcase_add_test(raw, test_huge_search_length);
	tcase_add_test(raw, test_sub_open_fields);
	tcase_add_test(raw, test_sub_open_viewers);
	tcase_add_test(raw, test_sub_replay_range);
	tcase_add_test(raw, test_sub_close_sub_id_bounds);
	tcase_add_test(raw, test_sub_open_huge_nfilters);
	tcase_add_test(raw, test_event_store_fields);
	tcase_add_test(raw, test_event_store_source_bound);
	tcase_add_test(raw, test_event_result_accepted_byte);
	tcase_add_test(raw, test_query_done_status_byte);
	tcase_add_test(raw, test_query_events_counts);
	tcase_add_test(raw, test_deliver_counts);
	tcase_add_test(raw, test_failed_decode_is_empty);
	tcase_add_test(raw, test_reply_socket_name);
	tcase_add_test(raw, test_neg_bounds);
	tcase_add_test(raw, test_bundle_limits);
	tcase_add_test(raw, test_conn_info_len);
	tcase_add_test(raw, test_conns_refusals);
	suite_add_tcase(s, raw);

	tcase_add_test(random, test_random_sub_open);
	tcase_set_timeout(random, 60);
	suite_add_tcase(s, random);
	return s;
}

int main(void)
{
	return suite_run(msg_suite());
}
