/*
 * msg.c - the encoder and decoder of every message in msg.h, side by side.
 *
 * Encoders write through a sticky writer, so a body reads as its list of
 * fields and a failed encode leaves the output buffer as it was.  They write
 * the header's version and type themselves (PROTO_VERSION and the message's
 * own type); only h->worker and h->request_id come from the caller.
 *
 * Decoders read through the sticky wire_reader and record semantic errors in
 * it too, so each checks one error at the end.  They accept only what an
 * encoder writes: booleans are 0 or 1, an absent list has count 0, an absent
 * limit is 0.  Every count is checked against the bytes left (times the
 * smallest encoding of one item) before anything is allocated, so a bogus
 * count fails as ERR_TRUNC and allocation stays proportional to the input.
 */
#include "msg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "wire.h"

#define SUB_ID_MAX MSG_SUB_ID_MAX
#define KEY_LEN 32
#define STR_MIN 4                /* an empty string: its length */
#define EVENT_TAG_MIN (1 + 4)    /* name, empty value */
#define FILTER_TAG_MIN (1 + 4)   /* name, nvalues */
#define FILTER_TAG_LETTERS 52    /* a-z, A-Z: at most one tag each */
#define TARGET_LEN (8 + 4)       /* conn_id, sub_serial */
/* A filter with every list absent and no search: ids, authors, kinds
 * (flag + count each), ntags, since, until, limit (flag + value), search flag. */
#define FILTER_MIN (3 * (1 + 4) + 4 + 8 + 8 + (1 + 4) + 1)

static const char *const msg_type_names[MSG_TYPE_LIMIT] = {
	[MSG_HELLO] = "hello",
	[MSG_HELLO_ACK] = "hello_ack",
	[MSG_EVENT_STORE] = "event_store",
	[MSG_EVENT_RESULT] = "event_result",
	[MSG_SUB_OPEN] = "sub_open",
	[MSG_QUERY_EVENTS] = "query_events",
	[MSG_QUERY_DONE] = "query_done",
	[MSG_SUB_CLOSE] = "sub_close",
	[MSG_CONN_CLOSED] = "conn_closed",
	[MSG_DELIVER] = "deliver",
	[MSG_WORKER_STATS] = "worker_stats",
	[MSG_COUNT] = "count",
	[MSG_COUNT_RESULT] = "count_result",
	[MSG_METRICS] = "metrics",
	[MSG_MANAGE] = "manage",
	[MSG_MANAGE_RESULT] = "manage_result",
	[MSG_POLICY] = "policy",
	[MSG_EVENT_RESULTS] = "event_results",
	[MSG_BUNDLE] = "bundle",
	[MSG_QUERY_LAST] = "query_last",
	[MSG_SUB_REPLAY] = "sub_replay",
	[MSG_CONNS_ASK] = "conns_ask",
	[MSG_CONNS_LIST] = "conns_list",
	[MSG_CONN_KICK] = "conn_kick",
	[MSG_NEG_OPEN] = "neg_open",
	[MSG_NEG_MSG] = "neg_msg",
	[MSG_NEG_CLOSE] = "neg_close",
	[MSG_NEG_REPLY] = "neg_reply",
	[MSG_CONN_KICKED] = "conn_kicked",
};

const char *msg_type_name(int type)
{
	if (type <= 0 || type >= MSG_TYPE_LIMIT)
		return "unknown";
	return msg_type_names[type];
}

struct msg_header msg_header_for(uint16_t worker, uint32_t request_id)
{
	return (struct msg_header){ .version = PROTO_VERSION, .worker = worker,
				    .request_id = request_id };
}

unsigned msg_version(void)
{
	return PROTO_VERSION;
}

void msg_topic(uint8_t out[MSG_TOPIC_LEN], enum msg_type type, uint16_t worker)
{
	out[0] = PROTO_VERSION;
	out[1] = (uint8_t)type;
	out[2] = (uint8_t)(worker >> 8);
	out[3] = (uint8_t)worker;
}

/* ---- writer: wire_put_* with the first error kept ---- */

struct msg_writer {
	struct buf *out;
	size_t start; /* out->len before the message, restored on failure */
	int err;
};

static void put_u8(struct msg_writer *w, uint8_t v)
{
	if (!w->err)
		w->err = wire_put_u8(w->out, v);
}

static void put_u16(struct msg_writer *w, uint16_t v)
{
	if (!w->err)
		w->err = wire_put_u16(w->out, v);
}

static void put_u32(struct msg_writer *w, uint32_t v)
{
	if (!w->err)
		w->err = wire_put_u32(w->out, v);
}

static void put_u64(struct msg_writer *w, uint64_t v)
{
	if (!w->err)
		w->err = wire_put_u64(w->out, v);
}

static void put_i64(struct msg_writer *w, int64_t v)
{
	if (!w->err)
		w->err = wire_put_i64(w->out, v);
}

static void put_raw(struct msg_writer *w, const void *data, size_t len)
{
	if (!w->err)
		w->err = wire_put_raw(w->out, data, len);
}

static void put_str(struct msg_writer *w, const char *s, size_t len)
{
	if (!w->err)
		w->err = wire_put_str(w->out, s, len);
}

static void put_view(struct msg_writer *w, const struct msg_str *s)
{
	put_str(w, s->ptr, s->len);
}

static void put_bool(struct msg_writer *w, bool v)
{
	put_u8(w, v ? 1 : 0);
}

static void writer_begin(struct msg_writer *w, struct buf *out, const struct msg_header *h,
			 uint8_t type)
{
	w->out = out;
	w->start = out->len;
	w->err = 0;
	put_u8(w, PROTO_VERSION);
	put_u8(w, type);
	put_u16(w, h->worker);
	put_u32(w, h->request_id);
}

static int writer_end(struct msg_writer *w)
{
	if (w->err) {
		w->out->len = w->start;
		if (w->out->data)
			w->out->data[w->start] = '\0';
	}
	return w->err;
}

/* ---- reader helpers: semantic checks recorded in the sticky reader ---- */

static void reader_reject(struct wire_reader *r, int err)
{
	if (!r->err)
		r->err = err;
	r->pos = r->end;
}

static bool get_bool(struct wire_reader *r)
{
	uint8_t v = wire_get_u8(r);

	if (v > 1)
		reader_reject(r, ERR_INVAL);
	return v == 1;
}

/* Reads a count of items of at least min_size bytes each.  A count the rest
 * of the body cannot hold is a truncation; 0 is returned after any error. */
static uint32_t get_count(struct wire_reader *r, size_t min_size)
{
	uint32_t n = wire_get_u32(r);

	if (r->err)
		return 0;
	if (n > wire_remaining(r) / min_size) {
		reader_reject(r, ERR_TRUNC);
		return 0;
	}
	return n;
}

static struct msg_str get_view(struct wire_reader *r)
{
	struct msg_str s;

	s.ptr = wire_get_str(r, &s.len, 0);
	return s;
}

/* A subscription id is 1..MSG_SUB_ID_MAX bytes of anything. */
static struct msg_str get_sub_id(struct wire_reader *r)
{
	struct msg_str s = get_view(r);

	if (!r->err && (s.len == 0 || s.len > SUB_ID_MAX))
		reader_reject(r, ERR_INVAL);
	return s;
}

/* Zeroed array of n items, or NULL when n is 0, the reader has failed, or
 * memory is short (which fails the reader). */
static void *reader_alloc(struct wire_reader *r, uint32_t n, size_t size)
{
	void *p;

	if (r->err || n == 0)
		return NULL;
	p = calloc(n, size);
	if (!p)
		reader_reject(r, ERR_NOMEM);
	return p;
}

/* Copies a string of the body into a new NUL-terminated allocation. */
static char *get_str_dup(struct wire_reader *r, uint32_t *len)
{
	const char *s = wire_get_str(r, len, 0);
	char *copy;

	if (!s)
		return NULL;
	copy = malloc((size_t)*len + 1);
	if (!copy) {
		reader_reject(r, ERR_NOMEM);
		return NULL;
	}
	memcpy(copy, s, *len);
	copy[*len] = '\0';
	return copy;
}

static bool is_letter(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Ends a decoder without owned fields: *m is zeroed on failure. */
static int decode_end(const struct wire_reader *r, void *m, size_t size)
{
	int err = wire_finish(r);

	if (err)
		memset(m, 0, size);
	return err;
}

/* ---- header ---- */

int msg_decode_header(const void *data, size_t len, struct msg_header *h)
{
	struct wire_reader r;

	if (len < MSG_HEADER_LEN)
		return ERR_TRUNC;
	wire_reader_init(&r, data, MSG_HEADER_LEN);
	h->version = wire_get_u8(&r);
	h->type = wire_get_u8(&r);
	h->worker = wire_get_u16(&r);
	h->request_id = wire_get_u32(&r);
	/* The fields stay filled on failure so the caller can log them. */
	if (h->version != PROTO_VERSION)
		return ERR_VERSION;
	if (h->type == 0 || h->type >= MSG_TYPE_LIMIT)
		return ERR_TYPE;
	return 0;
}

/* ---- HELLO, HELLO_ACK ---- */

int msg_encode_hello(struct buf *out, const struct msg_header *h, const struct msg_hello *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_HELLO);
	put_u32(&w, m->pid);
	put_u64(&w, m->boot_id);
	return writer_end(&w);
}

int msg_decode_hello(const void *body, size_t len, struct msg_hello *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->pid = wire_get_u32(&r);
	m->boot_id = wire_get_u64(&r);
	return decode_end(&r, m, sizeof(*m));
}

int msg_encode_hello_ack(struct buf *out, const struct msg_header *h, const struct msg_hello_ack *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_HELLO_ACK);
	put_u64(&w, m->boot_id);
	return writer_end(&w);
}

int msg_decode_hello_ack(const void *body, size_t len, struct msg_hello_ack *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->boot_id = wire_get_u64(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- EVENT_STORE ---- */

int msg_encode_event_store(struct buf *out, const struct msg_header *h,
			   const struct msg_event_store *m)
{
	const struct event *ev = &m->event;
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_EVENT_STORE);
	put_u64(&w, m->conn_id);
	put_raw(&w, ev->id, EVENT_ID_LEN);
	put_raw(&w, ev->pubkey, EVENT_PUBKEY_LEN);
	put_raw(&w, ev->sig, EVENT_SIG_LEN);
	put_i64(&w, ev->created_at);
	put_u32(&w, ev->kind);
	put_i64(&w, ev->expiration);
	put_u32(&w, ev->flags);
	put_str(&w, ev->content ? ev->content : "", ev->content_len);
	put_u32(&w, ev->ntags);
	for (uint32_t i = 0; i < ev->ntags; i++) {
		put_u8(&w, (uint8_t)ev->tags[i].name);
		put_str(&w, ev->tags[i].value, ev->tags[i].value_len);
	}
	put_str(&w, ev->json, ev->json_len);
	put_view(&w, &m->source);
	return writer_end(&w);
}

/* Reads the tags as views into the body; the caller frees the array. */
static struct event_tag *get_event_tags(struct wire_reader *r, uint32_t *ntags)
{
	uint32_t n = get_count(r, EVENT_TAG_MIN);
	struct event_tag *tags = reader_alloc(r, n, sizeof(*tags));

	*ntags = 0;
	if (!tags)
		return NULL;
	for (uint32_t i = 0; i < n && !r->err; i++) {
		uint8_t name = wire_get_u8(r);

		if (!r->err && !is_letter(name))
			reader_reject(r, ERR_INVAL);
		tags[i].name = (char)name;
		tags[i].value = wire_get_str(r, &tags[i].value_len, 0);
	}
	*ntags = n;
	return tags;
}

/* parts holds the fixed fields and tag views; event_build() copies them. */
int msg_decode_event_store(const void *body, size_t len, struct msg_event_store *m)
{
	struct wire_reader r;
	struct event parts = { 0 };
	struct msg_str json, content;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	wire_get_raw(&r, parts.id, EVENT_ID_LEN);
	wire_get_raw(&r, parts.pubkey, EVENT_PUBKEY_LEN);
	wire_get_raw(&r, parts.sig, EVENT_SIG_LEN);
	parts.created_at = wire_get_i64(&r);
	parts.kind = wire_get_u32(&r);
	if (parts.kind > EVENT_KIND_MAX)
		reader_reject(&r, ERR_INVAL);
	parts.expiration = wire_get_i64(&r);
	parts.flags = wire_get_u32(&r);
	if (parts.flags & ~(uint32_t)(EVENT_FLAG_PROTECTED | EVENT_FLAG_VANISH_HERE))
		reader_reject(&r, ERR_INVAL);
	content = get_view(&r);
	parts.tags = get_event_tags(&r, &parts.ntags);
	json = get_view(&r);
	m->source = get_view(&r);
	if (m->source.len > MSG_SOURCE_MAX)
		reader_reject(&r, ERR_INVAL);
	err = wire_finish(&r);
	if (!err)
		err = event_build(&m->event, parts.id, parts.pubkey, parts.sig, parts.created_at,
				  parts.kind, parts.tags, parts.ntags, json.ptr, json.len);
	if (!err) {
		m->event.expiration = parts.expiration;
		m->event.flags = parts.flags;
		err = event_set_content(&m->event, content.ptr, content.len);
	}
	free(parts.tags);
	if (err) {
		event_free(&m->event);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_event_store_release(struct msg_event_store *m)
{
	if (m)
		event_free(&m->event);
}

/* ---- EVENT_RESULT ---- */

int msg_encode_event_result(struct buf *out, const struct msg_header *h,
			    const struct msg_event_result *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_EVENT_RESULT);
	put_u64(&w, m->conn_id);
	put_raw(&w, m->id, EVENT_ID_LEN);
	put_bool(&w, m->accepted);
	put_view(&w, &m->message);
	return writer_end(&w);
}

int msg_decode_event_result(const void *body, size_t len, struct msg_event_result *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	wire_get_raw(&r, m->id, EVENT_ID_LEN);
	m->accepted = get_bool(&r);
	m->message = get_view(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* request_id, conn_id, id, accepted, message: the least an item takes. */
#define EVENT_RESULTS_ITEM_MIN (4 + 8 + EVENT_ID_LEN + 1 + STR_MIN)

int msg_encode_event_results(struct buf *out, const struct msg_header *h,
			     const struct msg_event_results *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_EVENT_RESULTS);
	put_u32(&w, m->count);
	for (uint32_t i = 0; i < m->count; i++) {
		const struct msg_event_result *r = &m->items[i].result;

		put_u32(&w, m->items[i].request_id);
		put_u64(&w, r->conn_id);
		put_raw(&w, r->id, EVENT_ID_LEN);
		put_bool(&w, r->accepted);
		put_view(&w, &r->message);
	}
	return writer_end(&w);
}

int msg_decode_event_results(const void *body, size_t len, struct msg_event_results *m)
{
	struct wire_reader r;
	uint32_t n;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	n = get_count(&r, EVENT_RESULTS_ITEM_MIN);
	m->items = reader_alloc(&r, n, sizeof(*m->items));
	for (uint32_t i = 0; m->items && i < n; i++) {
		struct msg_event_result *res = &m->items[i].result;

		m->items[i].request_id = wire_get_u32(&r);
		res->conn_id = wire_get_u64(&r);
		wire_get_raw(&r, res->id, EVENT_ID_LEN);
		res->accepted = get_bool(&r);
		res->message = get_view(&r);
	}
	m->count = m->items ? n : 0;
	err = wire_finish(&r);
	if (err) {
		msg_event_results_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_event_results_release(struct msg_event_results *m)
{
	if (!m)
		return;
	free(m->items);
	m->items = NULL;
	m->count = 0;
}

/* ---- filters (inside SUB_OPEN) ---- */

/* An absent list is written with count 0 whatever the struct holds. */
static void put_keys(struct msg_writer *w, bool has, uint32_t n, const void *keys)
{
	put_bool(w, has);
	put_u32(w, has ? n : 0);
	if (has && n)
		put_raw(w, keys, (size_t)n * KEY_LEN);
}

static void put_kinds(struct msg_writer *w, const struct filter *f)
{
	put_bool(w, f->has_kinds);
	put_u32(w, f->has_kinds ? f->nkinds : 0);
	for (uint32_t i = 0; f->has_kinds && i < f->nkinds; i++)
		put_u32(w, f->kinds[i]);
}

static void put_filter_tags(struct msg_writer *w, const struct filter *f)
{
	put_u32(w, f->ntags);
	for (uint32_t i = 0; i < f->ntags; i++) {
		const struct filter_tag *t = &f->tags[i];

		put_u8(w, (uint8_t)t->name);
		put_u32(w, t->nvalues);
		for (uint32_t j = 0; j < t->nvalues; j++)
			put_str(w, t->values[j], t->lens[j]);
	}
}

static void put_filter(struct msg_writer *w, const struct filter *f)
{
	put_keys(w, f->has_ids, f->nids, f->ids);
	put_keys(w, f->has_authors, f->nauthors, f->authors);
	put_kinds(w, f);
	put_filter_tags(w, f);
	put_i64(w, f->since);
	put_i64(w, f->until);
	put_bool(w, f->has_limit);
	put_u32(w, f->has_limit ? f->limit : 0);
	put_bool(w, f->search != NULL);
	if (f->search)
		put_str(w, f->search, strlen(f->search));
}

/* A count, then the filters: what get_filters() reads. */
static void put_filters(struct msg_writer *w, uint32_t n, const struct filter *filters)
{
	put_u32(w, n);
	for (uint32_t i = 0; i < n; i++)
		put_filter(w, &filters[i]);
}

/* Reads a list's presence flag and count; an absent list must be empty. */
static uint32_t get_list_count(struct wire_reader *r, bool *has, size_t item_size)
{
	uint32_t n;

	*has = get_bool(r);
	n = get_count(r, item_size);
	if (!*has && n) {
		reader_reject(r, ERR_INVAL);
		return 0;
	}
	return n;
}

static void *get_keys(struct wire_reader *r, bool *has, uint32_t *nkeys)
{
	uint32_t n = get_list_count(r, has, KEY_LEN);
	uint8_t *keys = reader_alloc(r, n, KEY_LEN);

	if (!keys)
		return NULL;
	wire_get_raw(r, keys, (size_t)n * KEY_LEN);
	*nkeys = n;
	return keys;
}

static uint32_t *get_kinds(struct wire_reader *r, bool *has, uint32_t *nkinds)
{
	uint32_t n = get_list_count(r, has, sizeof(uint32_t));
	uint32_t *kinds = reader_alloc(r, n, sizeof(*kinds));

	if (!kinds)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		kinds[i] = wire_get_u32(r);
	*nkinds = n;
	return kinds;
}

static uint64_t letter_bit(uint8_t c)
{
	return (uint64_t)1 << (c >= 'a' ? c - 'a' : 26 + c - 'A');
}

/* Fills t so that filter_free() can release it at any point of failure. */
static void get_filter_tag(struct wire_reader *r, struct filter_tag *t, uint64_t *seen)
{
	uint8_t name = wire_get_u8(r);
	uint32_t n;

	if (!r->err && (!is_letter(name) || (*seen & letter_bit(name))))
		reader_reject(r, ERR_INVAL);
	if (r->err)
		return;
	*seen |= letter_bit(name);
	t->name = (char)name;
	n = get_count(r, STR_MIN);
	t->values = reader_alloc(r, n, sizeof(*t->values));
	t->lens = reader_alloc(r, n, sizeof(*t->lens));
	if (!t->values || !t->lens)
		return;
	t->nvalues = n;
	for (uint32_t i = 0; i < n && !r->err; i++)
		t->values[i] = get_str_dup(r, &t->lens[i]);
}

static struct filter_tag *get_filter_tags(struct wire_reader *r, uint32_t *ntags)
{
	uint32_t n = get_count(r, FILTER_TAG_MIN);
	struct filter_tag *tags;
	uint64_t seen = 0;

	if (n > FILTER_TAG_LETTERS)
		reader_reject(r, ERR_INVAL);
	tags = reader_alloc(r, n, sizeof(*tags));
	if (!tags)
		return NULL;
	*ntags = n;
	for (uint32_t i = 0; i < n && !r->err; i++)
		get_filter_tag(r, &tags[i], &seen);
	return tags;
}

/* filter.h keeps search as a C string, so a NUL inside it is refused. */
static char *get_search(struct wire_reader *r)
{
	uint32_t len;
	char *s;

	if (!get_bool(r))
		return NULL;
	s = get_str_dup(r, &len);
	if (s && memchr(s, '\0', len))
		reader_reject(r, ERR_INVAL);
	return s;
}

static void get_filter(struct wire_reader *r, struct filter *f)
{
	f->ids = get_keys(r, &f->has_ids, &f->nids);
	f->authors = get_keys(r, &f->has_authors, &f->nauthors);
	f->kinds = get_kinds(r, &f->has_kinds, &f->nkinds);
	f->tags = get_filter_tags(r, &f->ntags);
	f->since = wire_get_i64(r);
	f->until = wire_get_i64(r);
	f->has_limit = get_bool(r);
	f->limit = wire_get_u32(r);
	if (!f->has_limit && f->limit)
		reader_reject(r, ERR_INVAL);
	f->search = get_search(r);
}

static struct filter *get_filters(struct wire_reader *r, uint32_t *nfilters)
{
	uint32_t n = get_count(r, FILTER_MIN);
	struct filter *filters = reader_alloc(r, n, sizeof(*filters));

	if (!filters)
		return NULL;
	for (uint32_t i = 0; i < n; i++)
		filter_init(&filters[i]);
	*nfilters = n;
	for (uint32_t i = 0; i < n && !r->err; i++)
		get_filter(r, &filters[i]);
	return filters;
}

/* ---- SUB_OPEN ---- */

int msg_encode_sub_open(struct buf *out, const struct msg_header *h, const struct msg_sub_open *m)
{
	struct msg_writer w;

	if (m->nviewers > MSG_VIEWERS_MAX)
		return ERR_INVAL; /* the decoder refuses more; nothing written */
	writer_begin(&w, out, h, MSG_SUB_OPEN);
	put_u64(&w, m->conn_id);
	put_u32(&w, m->sub_serial);
	put_view(&w, &m->sub_id);
	put_u8(&w, m->flags);
	put_u64(&w, m->resume_after);
	put_filters(&w, m->nfilters, m->filters);
	put_u32(&w, m->nviewers);
	put_raw(&w, m->viewers, (size_t)m->nviewers * KEY_LEN);
	return writer_end(&w);
}

/* Flags outside enum msg_sub_flags are refused: a new flag is a new version. */
int msg_decode_sub_open(const void *body, size_t len, struct msg_sub_open *m)
{
	struct wire_reader r;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_serial = wire_get_u32(&r);
	m->sub_id = get_sub_id(&r);
	m->flags = wire_get_u8(&r);
	m->resume_after = wire_get_u64(&r);
	if ((m->flags & ~(MSG_SUB_HISTORY | MSG_SUB_RESUME)) ||
	    (m->flags == (MSG_SUB_HISTORY | MSG_SUB_RESUME)) ||
	    (!(m->flags & MSG_SUB_RESUME) && m->resume_after))
		reader_reject(&r, ERR_INVAL);
	m->filters = get_filters(&r, &m->nfilters);
	m->nviewers = wire_get_u32(&r);
	if (m->nviewers > MSG_VIEWERS_MAX) {
		reader_reject(&r, ERR_INVAL);
		m->nviewers = 0;
	}
	wire_get_raw(&r, m->viewers, (size_t)m->nviewers * KEY_LEN);
	err = wire_finish(&r);
	if (err) {
		msg_sub_open_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

static void filters_release(struct filter **filters, uint32_t *nfilters)
{
	for (uint32_t i = 0; *filters && i < *nfilters; i++)
		filter_free(&(*filters)[i]);
	free(*filters);
	*filters = NULL;
	*nfilters = 0;
}

void msg_sub_open_release(struct msg_sub_open *m)
{
	if (m)
		filters_release(&m->filters, &m->nfilters);
}

/* ---- SUB_REPLAY ---- */

int msg_encode_sub_replay(struct buf *out, const struct msg_header *h,
			  const struct msg_sub_replay *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_SUB_REPLAY);
	put_u64(&w, m->conn_id);
	put_u32(&w, m->sub_serial);
	put_u64(&w, m->after);
	put_u64(&w, m->before);
	put_filters(&w, m->nfilters, m->filters);
	return writer_end(&w);
}

/* An empty range (before <= after + 1 asks for nothing) is refused. */
int msg_decode_sub_replay(const void *body, size_t len, struct msg_sub_replay *m)
{
	struct wire_reader r;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_serial = wire_get_u32(&r);
	m->after = wire_get_u64(&r);
	m->before = wire_get_u64(&r);
	if (!r.err && m->before <= m->after + 1)
		reader_reject(&r, ERR_INVAL);
	m->filters = get_filters(&r, &m->nfilters);
	err = wire_finish(&r);
	if (err) {
		msg_sub_replay_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_sub_replay_release(struct msg_sub_replay *m)
{
	if (m)
		filters_release(&m->filters, &m->nfilters);
}

/* ---- QUERY_EVENTS ---- */

/* The fields QUERY_EVENTS and QUERY_LAST share. */
static void put_query_events(struct msg_writer *w, const struct msg_query_events *m)
{
	put_u64(w, m->conn_id);
	put_u32(w, m->sub_serial);
	put_u32(w, m->count);
	for (uint32_t i = 0; i < m->count; i++)
		put_view(w, &m->events[i]);
}

static void get_query_events(struct wire_reader *r, struct msg_query_events *m)
{
	uint32_t n;

	m->conn_id = wire_get_u64(r);
	m->sub_serial = wire_get_u32(r);
	n = get_count(r, STR_MIN);
	m->events = reader_alloc(r, n, sizeof(*m->events));
	for (uint32_t i = 0; m->events && i < n; i++)
		m->events[i] = get_view(r);
	m->count = m->events ? n : 0;
}

int msg_encode_query_events(struct buf *out, const struct msg_header *h,
			    const struct msg_query_events *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_QUERY_EVENTS);
	put_query_events(&w, m);
	return writer_end(&w);
}

int msg_decode_query_events(const void *body, size_t len, struct msg_query_events *m)
{
	struct wire_reader r;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	get_query_events(&r, m);
	err = wire_finish(&r);
	if (err) {
		msg_query_events_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

/* ---- QUERY_LAST ---- */

int msg_encode_query_last(struct buf *out, const struct msg_header *h,
			  const struct msg_query_last *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_QUERY_LAST);
	put_query_events(&w, &m->events);
	put_u64(&w, m->max_seq);
	return writer_end(&w);
}

int msg_decode_query_last(const void *body, size_t len, struct msg_query_last *m)
{
	struct wire_reader r;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	get_query_events(&r, &m->events);
	m->max_seq = wire_get_u64(&r);
	err = wire_finish(&r);
	if (err) {
		msg_query_last_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_query_last_release(struct msg_query_last *m)
{
	if (m)
		msg_query_events_release(&m->events);
}

void msg_query_events_release(struct msg_query_events *m)
{
	if (!m)
		return;
	free(m->events);
	m->events = NULL;
	m->count = 0;
}

/* ---- QUERY_DONE ---- */

int msg_encode_query_done(struct buf *out, const struct msg_header *h,
			  const struct msg_query_done *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_QUERY_DONE);
	put_u64(&w, m->conn_id);
	put_u32(&w, m->sub_serial);
	put_u8(&w, m->status);
	put_u64(&w, m->max_seq);
	put_view(&w, &m->message);
	return writer_end(&w);
}

int msg_decode_query_done(const void *body, size_t len, struct msg_query_done *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_serial = wire_get_u32(&r);
	m->status = wire_get_u8(&r);
	if (m->status != MSG_QUERY_EOSE && m->status != MSG_QUERY_CLOSED)
		reader_reject(&r, ERR_INVAL);
	m->max_seq = wire_get_u64(&r);
	m->message = get_view(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- SUB_CLOSE, CONN_CLOSED ---- */

int msg_encode_sub_close(struct buf *out, const struct msg_header *h, const struct msg_sub_close *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_SUB_CLOSE);
	put_u64(&w, m->conn_id);
	put_view(&w, &m->sub_id);
	return writer_end(&w);
}

int msg_decode_sub_close(const void *body, size_t len, struct msg_sub_close *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_id = get_sub_id(&r);
	return decode_end(&r, m, sizeof(*m));
}

int msg_encode_conn_closed(struct buf *out, const struct msg_header *h,
			   const struct msg_conn_closed *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_CONN_CLOSED);
	put_u64(&w, m->conn_id);
	return writer_end(&w);
}

int msg_decode_conn_closed(const void *body, size_t len, struct msg_conn_closed *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- DELIVER ---- */

int msg_encode_deliver(struct buf *out, const struct msg_header *h, const struct msg_deliver *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_DELIVER);
	put_u64(&w, m->seq);
	put_u64(&w, m->commit_seq);
	put_u64(&w, (uint64_t)m->expiration);
	put_view(&w, &m->event_json);
	put_u32(&w, m->ntargets);
	for (uint32_t i = 0; i < m->ntargets; i++) {
		put_u64(&w, m->targets[i].conn_id);
		put_u32(&w, m->targets[i].sub_serial);
	}
	return writer_end(&w);
}

int msg_decode_deliver(const void *body, size_t len, struct msg_deliver *m)
{
	struct wire_reader r;
	uint32_t n;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->seq = wire_get_u64(&r);
	m->commit_seq = wire_get_u64(&r);
	m->expiration = (int64_t)wire_get_u64(&r);
	m->event_json = get_view(&r);
	n = get_count(&r, TARGET_LEN);
	m->targets = reader_alloc(&r, n, sizeof(*m->targets));
	for (uint32_t i = 0; m->targets && i < n; i++) {
		m->targets[i].conn_id = wire_get_u64(&r);
		m->targets[i].sub_serial = wire_get_u32(&r);
	}
	m->ntargets = m->targets ? n : 0;
	err = wire_finish(&r);
	if (err) {
		msg_deliver_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_deliver_release(struct msg_deliver *m)
{
	if (!m)
		return;
	free(m->targets);
	m->targets = NULL;
	m->ntargets = 0;
}

/* ---- WORKER_STATS ---- */

int msg_encode_worker_stats(struct buf *out, const struct msg_header *h,
			    const struct msg_worker_stats *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_WORKER_STATS);
	put_u32(&w, m->pid);
	put_u64(&w, m->started_at);
	put_u32(&w, m->connections);
	put_u32(&w, m->subscriptions);
	put_u64(&w, m->messages_in);
	put_u64(&w, m->messages_out);
	put_u64(&w, m->events_rejected);
	put_u64(&w, m->deliver_gaps);
	put_u64(&w, m->rate_limited);
	put_u64(&w, m->conns_refused);
	put_u64(&w, m->lane_refused);
	put_u64(&w, m->reads_paused);
	put_u64(&w, m->requests_on_loop);
	put_u64(&w, m->listener_restarts);
	put_u64(&w, m->unmasked_closed);
	put_u64(&w, m->store_timeouts);
	put_u64(&w, m->too_big_closed);
	put_u64(&w, m->pings_sent);
	put_u64(&w, m->ping_timeouts);
	for (int i = 0; i < HISTO_BUCKETS; i++)
		put_u64(&w, m->ok_latency.counts[i]);
	put_u64(&w, m->ok_latency.sum_us);
	put_u64(&w, m->ok_latency.count);
	put_u64(&w, m->proc.rss_bytes);
	put_u64(&w, m->proc.cpu_us);
	put_u64(&w, m->proc.open_fds);
	put_u64(&w, m->proc.max_fds);
	put_u64(&w, m->proc.start_time);
	return writer_end(&w);
}

int msg_decode_worker_stats(const void *body, size_t len, struct msg_worker_stats *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->pid = wire_get_u32(&r);
	m->started_at = wire_get_u64(&r);
	m->connections = wire_get_u32(&r);
	m->subscriptions = wire_get_u32(&r);
	m->messages_in = wire_get_u64(&r);
	m->messages_out = wire_get_u64(&r);
	m->events_rejected = wire_get_u64(&r);
	m->deliver_gaps = wire_get_u64(&r);
	m->rate_limited = wire_get_u64(&r);
	m->conns_refused = wire_get_u64(&r);
	m->lane_refused = wire_get_u64(&r);
	m->reads_paused = wire_get_u64(&r);
	m->requests_on_loop = wire_get_u64(&r);
	m->listener_restarts = wire_get_u64(&r);
	m->unmasked_closed = wire_get_u64(&r);
	m->store_timeouts = wire_get_u64(&r);
	m->too_big_closed = wire_get_u64(&r);
	m->pings_sent = wire_get_u64(&r);
	m->ping_timeouts = wire_get_u64(&r);
	for (int i = 0; i < HISTO_BUCKETS; i++)
		m->ok_latency.counts[i] = wire_get_u64(&r);
	m->ok_latency.sum_us = wire_get_u64(&r);
	m->ok_latency.count = wire_get_u64(&r);
	m->proc.rss_bytes = wire_get_u64(&r);
	m->proc.cpu_us = wire_get_u64(&r);
	m->proc.open_fds = wire_get_u64(&r);
	m->proc.max_fds = wire_get_u64(&r);
	m->proc.start_time = wire_get_u64(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- COUNT, COUNT_RESULT ---- */

int msg_encode_count(struct buf *out, const struct msg_header *h, const struct msg_count *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_COUNT);
	put_u64(&w, m->conn_id);
	put_view(&w, &m->sub_id);
	put_filters(&w, m->nfilters, m->filters);
	return writer_end(&w);
}

int msg_decode_count(const void *body, size_t len, struct msg_count *m)
{
	struct wire_reader r;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_id = get_sub_id(&r);
	m->filters = get_filters(&r, &m->nfilters);
	err = wire_finish(&r);
	if (err) {
		msg_count_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_count_release(struct msg_count *m)
{
	if (!m)
		return;
	for (uint32_t i = 0; m->filters && i < m->nfilters; i++)
		filter_free(&m->filters[i]);
	free(m->filters);
	m->filters = NULL;
	m->nfilters = 0;
}

int msg_encode_count_result(struct buf *out, const struct msg_header *h,
			    const struct msg_count_result *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_COUNT_RESULT);
	put_u64(&w, m->conn_id);
	put_view(&w, &m->sub_id);
	put_u8(&w, m->status);
	put_u64(&w, m->count);
	put_u8(&w, m->has_hll ? 1 : 0);
	if (m->has_hll)
		put_raw(&w, m->hll, MSG_HLL_REGISTERS);
	put_view(&w, &m->message);
	return writer_end(&w);
}

int msg_decode_count_result(const void *body, size_t len, struct msg_count_result *m)
{
	struct wire_reader r;
	uint8_t has_hll;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_id = get_sub_id(&r);
	m->status = wire_get_u8(&r);
	if (m->status != MSG_QUERY_EOSE && m->status != MSG_QUERY_CLOSED)
		reader_reject(&r, ERR_INVAL);
	m->count = wire_get_u64(&r);
	has_hll = wire_get_u8(&r);
	if (has_hll > 1)
		reader_reject(&r, ERR_INVAL);
	m->has_hll = has_hll == 1;
	if (m->has_hll)
		wire_get_raw(&r, m->hll, MSG_HLL_REGISTERS);
	m->message = get_view(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- METRICS ---- */

int msg_encode_metrics(struct buf *out, const struct msg_header *h, const struct msg_metrics *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_METRICS);
	put_view(&w, &m->prometheus);
	put_view(&w, &m->summary);
	return writer_end(&w);
}

int msg_decode_metrics(const void *body, size_t len, struct msg_metrics *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->prometheus = get_view(&r);
	m->summary = get_view(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- MANAGE, MANAGE_RESULT ---- */

int msg_encode_manage(struct buf *out, const struct msg_header *h, const struct msg_manage *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_MANAGE);
	put_raw(&w, m->pubkey, EVENT_PUBKEY_LEN);
	put_view(&w, &m->request);
	return writer_end(&w);
}

int msg_decode_manage(const void *body, size_t len, struct msg_manage *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	wire_get_raw(&r, m->pubkey, EVENT_PUBKEY_LEN);
	m->request = get_view(&r);
	return decode_end(&r, m, sizeof(*m));
}

int msg_encode_manage_result(struct buf *out, const struct msg_header *h,
			     const struct msg_manage_result *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_MANAGE_RESULT);
	put_view(&w, &m->response);
	return writer_end(&w);
}

int msg_decode_manage_result(const void *body, size_t len, struct msg_manage_result *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->response = get_view(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- POLICY ---- */

int msg_encode_policy(struct buf *out, const struct msg_header *h, const struct msg_policy *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_POLICY);
	put_view(&w, &m->relay_name);
	put_view(&w, &m->relay_description);
	put_view(&w, &m->relay_icon);
	put_u32(&w, m->nblocked);
	for (uint32_t i = 0; i < m->nblocked; i++)
		put_view(&w, &m->blocked_ips[i]);
	put_u8(&w, m->writes_restricted);
	return writer_end(&w);
}

int msg_decode_policy(const void *body, size_t len, struct msg_policy *m)
{
	struct wire_reader r;
	uint32_t n;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->relay_name = get_view(&r);
	m->relay_description = get_view(&r);
	m->relay_icon = get_view(&r);
	n = get_count(&r, STR_MIN);
	if (n > MSG_POLICY_MAX_IPS)
		reader_reject(&r, ERR_TOOBIG);
	m->blocked_ips = r.err ? NULL : reader_alloc(&r, n, sizeof(*m->blocked_ips));
	for (uint32_t i = 0; m->blocked_ips && i < n; i++)
		m->blocked_ips[i] = get_view(&r);
	m->nblocked = m->blocked_ips ? n : 0;
	m->writes_restricted = wire_get_u8(&r);
	err = wire_finish(&r);
	if (err) {
		msg_policy_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_policy_release(struct msg_policy *m)
{
	if (!m)
		return;
	free(m->blocked_ips);
	m->blocked_ips = NULL;
	m->nblocked = 0;
}

void msg_reply_socket_name(char *out, uint16_t worker, uint64_t boot_id)
{
	snprintf(out, MSG_REPLY_SOCKET_NAME_MAX, "relayd-%u-%016llx.ipc", (unsigned)worker,
		 (unsigned long long)boot_id);
}

int msg_encode_bundle(struct buf *out, const struct msg_header *h, const struct msg_bundle *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_BUNDLE);
	put_u32(&w, m->count);
	for (uint32_t i = 0; i < m->count; i++)
		put_view(&w, &m->parts[i]);
	return writer_end(&w);
}

/* Each part must at least hold a header; more than MSG_BUNDLE_MAX parts is
 * ERR_INVAL, so a bundle's work stays bounded. */
int msg_decode_bundle(const void *body, size_t len, struct msg_bundle *m)
{
	struct wire_reader r;
	uint32_t n;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	n = get_count(&r, STR_MIN + MSG_HEADER_LEN);
	if (n > MSG_BUNDLE_MAX)
		reader_reject(&r, ERR_INVAL);
	m->parts = reader_alloc(&r, n, sizeof(*m->parts));
	for (uint32_t i = 0; m->parts && i < n; i++) {
		m->parts[i] = get_view(&r);
		if (!r.err && m->parts[i].len < MSG_HEADER_LEN)
			reader_reject(&r, ERR_INVAL);
	}
	m->count = m->parts ? n : 0;
	err = wire_finish(&r);
	if (err) {
		msg_bundle_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_bundle_release(struct msg_bundle *m)
{
	if (!m)
		return;
	free(m->parts);
	m->parts = NULL;
	m->count = 0;
}

/* ---- CONNS_ASK, CONNS_LIST, CONN_KICK, CONN_KICKED ---- */

int msg_encode_conns_ask(struct buf *out, const struct msg_header *h,
			 const struct msg_conns_ask *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_CONNS_ASK);
	put_u32(&w, m->max);
	return writer_end(&w);
}

int msg_decode_conns_ask(const void *body, size_t len, struct msg_conns_ask *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->max = wire_get_u32(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* conn_id, address, since, messages in and out, subscriptions, npubkeys */
#define CONN_INFO_MIN (8 + STR_MIN + 8 + 8 + 8 + 4 + 1)

size_t msg_conn_info_len(const struct msg_conn_info *c)
{
	return CONN_INFO_MIN + c->address.len + (size_t)c->npubkeys * KEY_LEN;
}

static void put_conn_info(struct msg_writer *w, const struct msg_conn_info *c)
{
	put_u64(w, c->conn_id);
	put_view(w, &c->address);
	put_u64(w, c->since);
	put_u64(w, c->messages_in);
	put_u64(w, c->messages_out);
	put_u32(w, c->subscriptions);
	put_u8(w, (uint8_t)c->npubkeys);
	if (c->npubkeys)
		put_raw(w, c->pubkeys, (size_t)c->npubkeys * KEY_LEN);
}

/* A view of the next n raw bytes (NULL for none, or on failure). */
static const uint8_t *get_bytes_view(struct wire_reader *r, size_t n)
{
	const uint8_t *p = r->pos;

	if (r->err || n == 0)
		return NULL;
	if (wire_remaining(r) < n) {
		reader_reject(r, ERR_TRUNC);
		return NULL;
	}
	r->pos += n;
	return p;
}

static void get_conn_info(struct wire_reader *r, struct msg_conn_info *c)
{
	c->conn_id = wire_get_u64(r);
	c->address = get_view(r);
	if (c->address.len > MSG_CONN_ADDRESS_MAX)
		reader_reject(r, ERR_INVAL);
	c->since = wire_get_u64(r);
	c->messages_in = wire_get_u64(r);
	c->messages_out = wire_get_u64(r);
	c->subscriptions = wire_get_u32(r);
	c->npubkeys = wire_get_u8(r);
	if (c->npubkeys > MSG_VIEWERS_MAX) {
		reader_reject(r, ERR_INVAL);
		c->npubkeys = 0;
	}
	c->pubkeys = get_bytes_view(r, (size_t)c->npubkeys * KEY_LEN);
}

/* An encoder refuses what its decoder would: more than 8 pubkeys, a
 * longer address, or more listed than total. */
int msg_encode_conns_list(struct buf *out, const struct msg_header *h,
			  const struct msg_conns_list *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_CONNS_LIST);
	if (m->count > m->total)
		w.err = ERR_INVAL;
	put_u32(&w, m->total);
	put_u32(&w, m->count);
	for (uint32_t i = 0; i < m->count && !w.err; i++) {
		if (m->conns[i].npubkeys > MSG_VIEWERS_MAX ||
		    m->conns[i].address.len > MSG_CONN_ADDRESS_MAX)
			w.err = ERR_INVAL;
		else
			put_conn_info(&w, &m->conns[i]);
	}
	return writer_end(&w);
}

int msg_decode_conns_list(const void *body, size_t len, struct msg_conns_list *m)
{
	struct wire_reader r;
	uint32_t n;
	int err;

	memset(m, 0, sizeof(*m));
	wire_reader_init(&r, body, len);
	m->total = wire_get_u32(&r);
	n = get_count(&r, CONN_INFO_MIN);
	if (n > m->total)
		reader_reject(&r, ERR_INVAL);
	m->conns = reader_alloc(&r, n, sizeof(*m->conns));
	for (uint32_t i = 0; m->conns && i < n; i++)
		get_conn_info(&r, &m->conns[i]);
	m->count = m->conns ? n : 0;
	err = wire_finish(&r);
	if (err) {
		msg_conns_list_release(m);
		memset(m, 0, sizeof(*m));
	}
	return err;
}

void msg_conns_list_release(struct msg_conns_list *m)
{
	if (!m)
		return;
	free(m->conns);
	m->conns = NULL;
	m->count = 0;
}

static bool close_code_ok(uint16_t code)
{
	return code >= 1000 && code <= 4999;
}

int msg_encode_conn_kick(struct buf *out, const struct msg_header *h,
			 const struct msg_conn_kick *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_CONN_KICK);
	if (!close_code_ok(m->code) || m->reason.len > MSG_CLOSE_REASON_MAX)
		w.err = ERR_INVAL;
	put_u64(&w, m->conn_id);
	put_u16(&w, m->code);
	put_view(&w, &m->reason);
	return writer_end(&w);
}

int msg_decode_conn_kick(const void *body, size_t len, struct msg_conn_kick *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->code = wire_get_u16(&r);
	m->reason.ptr = wire_get_str(&r, &m->reason.len, MSG_CLOSE_REASON_MAX);
	if (!r.err && !close_code_ok(m->code))
		reader_reject(&r, ERR_INVAL);
	return decode_end(&r, m, sizeof(*m));
}

int msg_encode_conn_kicked(struct buf *out, const struct msg_header *h,
			   const struct msg_conn_kicked *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_CONN_KICKED);
	put_u64(&w, m->conn_id);
	put_bool(&w, m->found);
	return writer_end(&w);
}

int msg_decode_conn_kicked(const void *body, size_t len, struct msg_conn_kicked *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->found = get_bool(&r);
	return decode_end(&r, m, sizeof(*m));
}

/* ---- NEG_OPEN, NEG_MSG, NEG_CLOSE, NEG_REPLY (NIP-77) ---- */

/* A negentropy message: 1..MSG_NEG_BYTES_MAX bytes. */
static struct msg_str get_neg_message(struct wire_reader *r)
{
	struct msg_str s;

	s.ptr = wire_get_str(r, &s.len, MSG_NEG_BYTES_MAX);
	if (!r->err && s.len == 0)
		reader_reject(r, ERR_INVAL);
	return s;
}

static bool neg_message_ok(const struct msg_str *s)
{
	return s->len > 0 && s->len <= MSG_NEG_BYTES_MAX;
}

int msg_encode_neg_open(struct buf *out, const struct msg_header *h, const struct msg_neg_open *m)
{
	struct msg_writer w;

	if (m->nviewers > MSG_VIEWERS_MAX || !neg_message_ok(&m->message))
		return ERR_INVAL;
	writer_begin(&w, out, h, MSG_NEG_OPEN);
	put_u64(&w, m->conn_id);
	put_view(&w, &m->sub_id);
	put_filter(&w, &m->filter);
	put_u32(&w, m->nviewers);
	put_raw(&w, m->viewers, (size_t)m->nviewers * KEY_LEN);
	put_view(&w, &m->message);
	return writer_end(&w);
}

int msg_decode_neg_open(const void *body, size_t len, struct msg_neg_open *m)
{
	struct wire_reader r;
	int err;

	memset(m, 0, sizeof(*m));
	filter_init(&m->filter);
	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_id = get_sub_id(&r);
	if (!r.err)
		get_filter(&r, &m->filter);
	m->nviewers = wire_get_u32(&r);
	if (m->nviewers > MSG_VIEWERS_MAX) {
		reader_reject(&r, ERR_INVAL);
		m->nviewers = 0;
	}
	wire_get_raw(&r, m->viewers, (size_t)m->nviewers * KEY_LEN);
	m->message = get_neg_message(&r);
	err = wire_finish(&r);
	if (err) {
		msg_neg_open_release(m);
		memset(m, 0, sizeof(*m));
		filter_init(&m->filter);
	}
	return err;
}

void msg_neg_open_release(struct msg_neg_open *m)
{
	if (m) {
		filter_free(&m->filter);
		filter_init(&m->filter);
	}
}

int msg_encode_neg_msg(struct buf *out, const struct msg_header *h, const struct msg_neg_msg *m)
{
	struct msg_writer w;

	if (!neg_message_ok(&m->message))
		return ERR_INVAL;
	writer_begin(&w, out, h, MSG_NEG_MSG);
	put_u64(&w, m->conn_id);
	put_view(&w, &m->sub_id);
	put_view(&w, &m->message);
	return writer_end(&w);
}

int msg_decode_neg_msg(const void *body, size_t len, struct msg_neg_msg *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_id = get_sub_id(&r);
	m->message = get_neg_message(&r);
	return decode_end(&r, m, sizeof(*m));
}

int msg_encode_neg_close(struct buf *out, const struct msg_header *h,
			 const struct msg_neg_close *m)
{
	struct msg_writer w;

	writer_begin(&w, out, h, MSG_NEG_CLOSE);
	put_u64(&w, m->conn_id);
	put_view(&w, &m->sub_id);
	return writer_end(&w);
}

int msg_decode_neg_close(const void *body, size_t len, struct msg_neg_close *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_id = get_sub_id(&r);
	return decode_end(&r, m, sizeof(*m));
}

int msg_encode_neg_reply(struct buf *out, const struct msg_header *h,
			 const struct msg_neg_reply *m)
{
	struct msg_writer w;

	if (m->status > MSG_NEG_ERROR || m->payload.len > MSG_NEG_BYTES_MAX)
		return ERR_INVAL;
	writer_begin(&w, out, h, MSG_NEG_REPLY);
	put_u64(&w, m->conn_id);
	put_view(&w, &m->sub_id);
	put_u8(&w, m->status);
	put_view(&w, &m->payload);
	return writer_end(&w);
}

int msg_decode_neg_reply(const void *body, size_t len, struct msg_neg_reply *m)
{
	struct wire_reader r;

	wire_reader_init(&r, body, len);
	m->conn_id = wire_get_u64(&r);
	m->sub_id = get_sub_id(&r);
	m->status = wire_get_u8(&r);
	if (!r.err && m->status > MSG_NEG_ERROR)
		reader_reject(&r, ERR_INVAL);
	m->payload.ptr = wire_get_str(&r, &m->payload.len, MSG_NEG_BYTES_MAX);
	return decode_end(&r, m, sizeof(*m));
}
