/*
 * neg.c - negentropy protocol version 1 (see neg.h).
 *
 * A reply is built range by range.  Each incoming range is answered into a
 * small piece (a Skip run, at most 16 fingerprints, or fewer than 32 ids),
 * and the piece joins the reply only while the reply stays under the frame
 * limit less a margin.  Past it, one Fingerprint range from the last bound
 * written to infinity stands for everything not answered, so the peer asks
 * about it again in the next round.
 */
#include "neg.h"

#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

#define NEG_BUCKETS 16
#define NEG_INFINITY UINT64_MAX
/* Room kept under the frame limit for the closing Fingerprint range. */
#define NEG_MARGIN 200

enum neg_mode { NEG_SKIP = 0, NEG_FINGERPRINT = 1, NEG_IDLIST = 2 };

/* A bound: a timestamp and an id prefix of len bytes, zero-padded. */
struct neg_bound {
	uint64_t ts;
	uint8_t id[NEG_ID_LEN];
	size_t len;
};

/* A cursor over one incoming message; err sticks once set. */
struct neg_reader {
	const uint8_t *pos, *end;
	uint64_t last_ts;
	int err;
};

/* The writing side of one reply: the timestamp deltas restart with it. */
struct neg_writer {
	struct buf *out;
	uint64_t last_ts;
	int err;
};

static int neg_item_cmp(const void *a, const void *b)
{
	const struct neg_item *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return memcmp(x->id, y->id, NEG_ID_LEN);
}

void neg_sort(struct neg_item *items, size_t n)
{
	if (n > 1)
		qsort(items, n, sizeof(*items), neg_item_cmp);
}

/* Adds the 32-byte little-endian number id into sum (four 64-bit limbs). */
static void neg_sum_add(uint64_t sum[4], const uint8_t id[NEG_ID_LEN])
{
	unsigned carry = 0;

	for (int i = 0; i < 4; i++) {
		uint64_t limb = 0, s;

		for (int b = 7; b >= 0; b--)
			limb = (limb << 8) | id[i * 8 + b];
		s = sum[i] + limb;
		unsigned c1 = s < limb;
		sum[i] = s + carry;
		carry = c1 | (sum[i] < s);
	}
}

/* The varint of v (base 128, most significant digit first) into out;
 * returns its length (1..10). */
static size_t neg_varint(uint64_t v, uint8_t out[10])
{
	uint8_t digits[10];
	size_t n = 0;

	do {
		digits[n++] = v & 0x7f;
		v >>= 7;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = digits[n - 1 - i] | (i + 1 < n ? 0x80 : 0);
	return n;
}

void neg_fingerprint(const struct neg_item *items, size_t n, uint8_t out[NEG_FP_LEN])
{
	uint64_t sum[4] = { 0, 0, 0, 0 };
	uint8_t input[NEG_ID_LEN + 10], hash[SHA256_DIGEST_LENGTH];

	for (size_t i = 0; i < n; i++)
		neg_sum_add(sum, items[i].id);
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			input[i * 8 + b] = (uint8_t)(sum[i] >> (8 * b));
	SHA256(input, NEG_ID_LEN + neg_varint(n, input + NEG_ID_LEN), hash);
	memcpy(out, hash, NEG_FP_LEN);
}

/* ---- reading ---- */

static void neg_fail(struct neg_reader *r)
{
	r->err = ERR_INVAL;
	r->pos = r->end;
}

static uint64_t neg_get_varint(struct neg_reader *r)
{
	uint64_t v = 0;

	for (;;) {
		uint8_t byte;

		if (r->err || r->pos == r->end || v >> 57) {
			neg_fail(r);
			return 0;
		}
		byte = *r->pos++;
		v = (v << 7) | (byte & 0x7f);
		if (!(byte & 0x80))
			return v;
	}
}

static const uint8_t *neg_get_bytes(struct neg_reader *r, size_t n)
{
	const uint8_t *p = r->pos;

	if (r->err || (size_t)(r->end - r->pos) < n) {
		neg_fail(r);
		return NULL;
	}
	r->pos += n;
	return p;
}

static void neg_get_bound(struct neg_reader *r, struct neg_bound *b)
{
	uint64_t enc = neg_get_varint(r), len;
	const uint8_t *prefix;

	if (enc == 0 || r->last_ts == NEG_INFINITY) {
		b->ts = NEG_INFINITY;
	} else if (enc - 1 >= NEG_INFINITY - r->last_ts) {
		neg_fail(r); /* past infinity: no encoder writes that */
		b->ts = NEG_INFINITY;
	} else {
		b->ts = r->last_ts + (enc - 1);
	}
	r->last_ts = b->ts;
	len = neg_get_varint(r);
	if (len > NEG_ID_LEN)
		neg_fail(r);
	memset(b->id, 0, NEG_ID_LEN);
	b->len = r->err ? 0 : (size_t)len;
	prefix = neg_get_bytes(r, b->len);
	if (prefix)
		memcpy(b->id, prefix, b->len);
}

/* ---- writing ---- */

static void neg_put(struct neg_writer *w, const void *data, size_t len)
{
	if (!w->err && buf_append(w->out, data, len))
		w->err = ERR_NOMEM;
}

static void neg_put_varint(struct neg_writer *w, uint64_t v)
{
	uint8_t tmp[10];

	neg_put(w, tmp, neg_varint(v, tmp));
}

static void neg_put_bound(struct neg_writer *w, const struct neg_bound *b)
{
	if (b->ts == NEG_INFINITY) {
		neg_put_varint(w, 0);
		w->last_ts = NEG_INFINITY;
	} else {
		neg_put_varint(w, 1 + (b->ts - w->last_ts));
		w->last_ts = b->ts;
	}
	neg_put_varint(w, b->len);
	neg_put(w, b->id, b->len);
}

static void neg_put_fingerprint(struct neg_writer *w, const struct neg_item *items, size_t n)
{
	uint8_t fp[NEG_FP_LEN];

	neg_fingerprint(items, n, fp);
	neg_put_varint(w, NEG_FINGERPRINT);
	neg_put(w, fp, NEG_FP_LEN);
}

/* ---- ranges ---- */

/* Whether item lies below bound b (ids compared against the padded prefix). */
static bool neg_below(const struct neg_item *item, const struct neg_bound *b)
{
	if (item->ts != b->ts)
		return item->ts < b->ts;
	return memcmp(item->id, b->id, NEG_ID_LEN) < 0;
}

/* The first index in [lo, hi) whose item is not below b, or hi. */
static size_t neg_lower_bound(const struct neg_item *items, size_t lo, size_t hi,
			      const struct neg_bound *b)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (neg_below(&items[mid], b))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The shortest bound above prev and at or below curr. */
static void neg_minimal_bound(const struct neg_item *prev, const struct neg_item *curr,
			      struct neg_bound *b)
{
	size_t shared = 0;

	memset(b, 0, sizeof(*b));
	b->ts = curr->ts;
	if (prev->ts != curr->ts)
		return;
	while (shared < NEG_ID_LEN && prev->id[shared] == curr->id[shared])
		shared++;
	b->len = shared < NEG_ID_LEN ? shared + 1 : NEG_ID_LEN;
	memcpy(b->id, curr->id, b->len);
}

static void neg_put_idlist(struct neg_writer *w, const struct neg_item *items, size_t lo,
			   size_t hi, const struct neg_bound *upper)
{
	neg_put_bound(w, upper);
	neg_put_varint(w, NEG_IDLIST);
	neg_put_varint(w, hi - lo);
	for (size_t i = lo; i < hi; i++)
		neg_put(w, items[i].id, NEG_ID_LEN);
}

/* Answers [lo, hi) up to upper: its ids when few, else 16 fingerprints of
 * buckets as equal as the count allows. */
static void neg_split(struct neg_writer *w, const struct neg_item *items, size_t lo, size_t hi,
		      const struct neg_bound *upper)
{
	size_t n = hi - lo, per, extra, at = lo;

	if (n < NEG_BUCKETS * 2) {
		neg_put_idlist(w, items, lo, hi, upper);
		return;
	}
	per = n / NEG_BUCKETS;
	extra = n % NEG_BUCKETS;
	for (size_t i = 0; i < NEG_BUCKETS; i++) {
		size_t size = per + (i < extra ? 1 : 0);
		struct neg_bound next;

		if (at + size == hi)
			next = *upper;
		else
			neg_minimal_bound(&items[at + size - 1], &items[at + size], &next);
		neg_put_bound(w, &next);
		neg_put_fingerprint(w, items + at, size);
		at += size;
	}
}

int neg_initiate(const struct neg_item *items, size_t n, size_t frame_limit, struct buf *out)
{
	struct neg_writer w = { out, 0, 0 };
	struct neg_bound all = { NEG_INFINITY, { 0 }, 0 };
	uint8_t version = NEG_VERSION;

	(void)frame_limit; /* 16 fingerprints or 31 ids always fit */
	neg_put(&w, &version, 1);
	neg_split(&w, items, 0, n, &all);
	return w.err;
}

static int neg_id_cmp(const void *a, const void *b)
{
	return memcmp(a, b, NEG_ID_LEN);
}

/* The initiator's side of an IdList: compares the peer's count ids with
 * items [lo, hi) and reports what each side lacks. */
static int neg_compare_ids(const struct neg_item *items, size_t lo, size_t hi,
			   const uint8_t *theirs, uint64_t count, struct neg_side *side)
{
	uint8_t (*ids)[NEG_ID_LEN] = count ? malloc((size_t)count * NEG_ID_LEN) : NULL;
	bool *seen = count ? calloc((size_t)count, 1) : NULL;

	if (count && (!ids || !seen)) {
		free(ids);
		free(seen);
		return ERR_NOMEM;
	}
	if (count) {
		memcpy(ids, theirs, (size_t)count * NEG_ID_LEN);
		qsort(ids, (size_t)count, NEG_ID_LEN, neg_id_cmp);
	}
	for (size_t i = lo; i < hi; i++) {
		uint8_t(*hit)[NEG_ID_LEN] =
			count ? bsearch(items[i].id, ids, (size_t)count, NEG_ID_LEN, neg_id_cmp) : NULL;

		if (hit)
			seen[hit - ids] = true;
		else if (side->have)
			side->have(side->arg, items[i].id);
	}
	for (uint64_t i = 0; i < count; i++)
		if (!seen[i] && side->need && (i == 0 || memcmp(ids[i], ids[i - 1], NEG_ID_LEN)))
			side->need(side->arg, ids[i]);
	free(ids);
	free(seen);
	return 0;
}

/* The state of one reply while its ranges are answered. */
struct neg_round {
	const struct neg_item *items;
	size_t n;
	struct neg_side *side;
	struct neg_bound prev;  /* the upper bound of the last incoming range */
	size_t prev_idx;        /* its index in items */
	size_t written_idx;     /* items below the last bound written */
	bool skip;              /* a Skip run waits to be written */
};

/* Writes the pending Skip run (up to prev) into piece. */
static void neg_flush_skip(struct neg_round *rd, struct neg_writer *piece)
{
	if (!rd->skip)
		return;
	rd->skip = false;
	neg_put_bound(piece, &rd->prev);
	neg_put_varint(piece, NEG_SKIP);
}

/* Answers one incoming range of mode [lo, hi) up to cur into piece. */
static int neg_answer_range(struct neg_round *rd, struct neg_reader *r, uint64_t mode,
			    size_t lo, size_t hi, const struct neg_bound *cur,
			    struct neg_writer *piece)
{
	if (mode == NEG_SKIP) {
		rd->skip = true;
	} else if (mode == NEG_FINGERPRINT) {
		const uint8_t *theirs = neg_get_bytes(r, NEG_FP_LEN);
		uint8_t ours[NEG_FP_LEN];

		if (!theirs)
			return ERR_INVAL;
		neg_fingerprint(rd->items + lo, hi - lo, ours);
		if (memcmp(theirs, ours, NEG_FP_LEN) == 0) {
			rd->skip = true;
		} else {
			neg_flush_skip(rd, piece);
			neg_split(piece, rd->items, lo, hi, cur);
		}
	} else if (mode == NEG_IDLIST) {
		uint64_t count = neg_get_varint(r);
		const uint8_t *ids;

		if (r->err || count > (uint64_t)(r->end - r->pos) / NEG_ID_LEN)
			return ERR_INVAL;
		ids = neg_get_bytes(r, (size_t)count * NEG_ID_LEN);
		if (rd->side->initiator) {
			rd->skip = true;
			return neg_compare_ids(rd->items, lo, hi, ids, count, rd->side);
		}
		neg_flush_skip(rd, piece);
		neg_split(piece, rd->items, lo, hi, cur);
	} else {
		return ERR_INVAL; /* 3 was deprecated; others never existed */
	}
	return 0;
}

/* Closes a reply that ran out of room at the range starting at prev: the
 * Skip run before it (ranges already settled must not be asked about
 * again, or the initiator would report their ids twice), then one
 * Fingerprint range over everything from there up to infinity. */
static void neg_put_rest(struct neg_round *rd, struct neg_writer *w)
{
	struct neg_bound all = { NEG_INFINITY, { 0 }, 0 };

	if (rd->skip) {
		neg_put_bound(w, &rd->prev);
		neg_put_varint(w, NEG_SKIP);
		rd->written_idx = rd->prev_idx;
	}
	neg_put_bound(w, &all);
	neg_put_fingerprint(w, rd->items + rd->written_idx, rd->n - rd->written_idx);
}

/* Reads the version byte; a responder answers another version with its own. */
static int neg_check_version(struct neg_reader *r, const struct neg_side *side,
			     struct neg_writer *w, bool *answered)
{
	const uint8_t *v = neg_get_bytes(r, 1);

	*answered = false;
	if (!v || *v < 0x60 || *v > 0x6f)
		return ERR_INVAL;
	if (*v == NEG_VERSION)
		return 0;
	if (side->initiator)
		return ERR_VERSION;
	*answered = true;
	return 0;
}

int neg_reconcile(const struct neg_item *items, size_t n, const uint8_t *in, size_t len,
		  size_t frame_limit, struct neg_side *side, struct buf *out)
{
	struct neg_reader r = { in, in + len, 0, 0 };
	struct neg_writer w = { out, 0, 0 };
	struct neg_round rd = { items, n, side, { 0, { 0 }, 0 }, 0, 0, false };
	struct buf scratch = BUF_INIT;
	uint8_t version = NEG_VERSION;
	size_t start = out->len, room;
	bool answered;
	int rc = neg_check_version(&r, side, &w, &answered);

	side->done = false;
	if (rc)
		return rc;
	neg_put(&w, &version, 1);
	if (answered)
		return w.err;
	if (frame_limit < NEG_FRAME_MIN)
		frame_limit = NEG_FRAME_MIN;
	room = frame_limit - NEG_MARGIN;
	while (rc == 0 && r.pos < r.end) {
		struct neg_writer piece = { &scratch, w.last_ts, 0 };
		struct neg_bound cur;
		uint64_t mode;
		size_t hi;
		bool skip_before;

		buf_reset(&scratch);
		neg_get_bound(&r, &cur);
		mode = neg_get_varint(&r);
		if (r.err) {
			rc = ERR_INVAL;
			break;
		}
		hi = neg_lower_bound(items, rd.prev_idx, n, &cur);
		skip_before = rd.skip;
		rc = neg_answer_range(&rd, &r, mode, rd.prev_idx, hi, &cur, &piece);
		if (rc == 0 && (rc = piece.err) == 0 && scratch.len) {
			if ((out->len - start) + scratch.len > room) {
				rd.skip = skip_before; /* the piece that wrote it is dropped */
				neg_put_rest(&rd, &w);
				break;
			}
			neg_put(&w, scratch.data, scratch.len);
			w.last_ts = piece.last_ts;
			rd.written_idx = hi;
		}
		rd.prev = cur;
		rd.prev_idx = hi;
	}
	buf_free(&scratch);
	if (rc == 0)
		rc = w.err;
	if (rc) {
		out->len = start;
		return rc;
	}
	side->done = out->len - start == 1;
	return 0;
}
