/* erase.c - NIP-09 deletion and NIP-62 vanish (see erase.h). */
#include "erase.h"

#include <stdlib.h>
#include <string.h>

#include "../common/err.h"
#include "../common/hex.h"
#include "../common/log.h"
#include "tagval.h"

#define KIND_DELETION 5
#define KIND_VANISH 62
#define KIND_GIFT_WRAP 1059

enum erase_stmt {
	ES_IS_DELETED_ID,
	ES_DELETED_ADDR_UNTIL,
	ES_VANISHED_UNTIL,
	ES_DELETE_BY_ID,
	ES_TOMBSTONE_ID,
	ES_DELETE_ADDR,
	ES_TOMBSTONE_ADDR,
	ES_DELETE_AUTHOR,
	ES_DELETE_WRAPS,
	ES_TOMBSTONE_VANISH,
	ES_IS_BANNED,
	ES_COUNT
};

static const char *const erase_sql[ES_COUNT] = {
	[ES_IS_DELETED_ID] = "SELECT 1 FROM deleted_ids WHERE id = ?1 AND pubkey = ?2",
	[ES_DELETED_ADDR_UNTIL] = "SELECT until FROM deleted_addrs"
				  " WHERE pubkey = ?1 AND kind = ?2 AND addr = ?3",
	[ES_VANISHED_UNTIL] = "SELECT until FROM vanished WHERE pubkey = ?1",
	[ES_DELETE_BY_ID] = "DELETE FROM events WHERE id = ?1 AND pubkey = ?2 AND kind NOT IN (5, 62)",
	[ES_TOMBSTONE_ID] = "INSERT OR IGNORE INTO deleted_ids(id, pubkey) VALUES(?1, ?2)",
	[ES_DELETE_ADDR] = "DELETE FROM events WHERE pubkey = ?1 AND kind = ?2 AND addr = ?3"
			   " AND created_at <= ?4",
	[ES_TOMBSTONE_ADDR] = "INSERT INTO deleted_addrs(pubkey, kind, addr, until)"
			      " VALUES(?1, ?2, ?3, ?4) ON CONFLICT DO UPDATE"
			      " SET until = max(until, excluded.until)",
	[ES_DELETE_AUTHOR] = "DELETE FROM events WHERE pubkey = ?1 AND created_at <= ?2"
			     " AND kind != 62",
	[ES_DELETE_WRAPS] = "DELETE FROM events WHERE kind = 1059 AND created_at <= ?2 AND seq IN"
			    " (SELECT seq FROM tags WHERE name = 'p' AND value = ?1)",
	[ES_TOMBSTONE_VANISH] = "INSERT INTO vanished(pubkey, until) VALUES(?1, ?2)"
				" ON CONFLICT DO UPDATE SET until = max(until, excluded.until)",
	[ES_IS_BANNED] = "SELECT 1 FROM banned_pubkeys WHERE pubkey = ?1",
};

struct erase {
	sqlite3 *db;
	sqlite3_stmt *st[ES_COUNT];
};

struct erase *erase_new(sqlite3 *db)
{
	struct erase *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->db = db;
	for (int i = 0; i < ES_COUNT; i++) {
		if (sqlite3_prepare_v3(db, erase_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &e->st[i],
				       NULL) != SQLITE_OK) {
			log_warnx("sqlite prepare: %s", sqlite3_errmsg(db));
			erase_free(e);
			return NULL;
		}
	}
	return e;
}

void erase_free(struct erase *e)
{
	if (!e)
		return;
	for (int i = 0; i < ES_COUNT; i++)
		sqlite3_finalize(e->st[i]);
	free(e);
}

/* Runs st; returns 1 with *value set if it gave a row, 0 if none, ERR_DB. */
static int erase_fetch(struct erase *e, sqlite3_stmt *st, int64_t *value)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW && value)
		*value = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		log_warnx("sqlite: %s", sqlite3_errmsg(e->db));
		return ERR_DB;
	}
	return rc == SQLITE_ROW;
}

static int erase_run(struct erase *e, sqlite3_stmt *st)
{
	int rc = erase_fetch(e, st, NULL);

	return rc < 0 ? rc : 0;
}

/* Is ev's author (or, for a gift wrap, its recipient) gone up to a time
 * not before ev?  The request to vanish itself is exempt. */
static int erase_vanished(struct erase *e, const uint8_t *pubkey, int64_t created_at)
{
	sqlite3_stmt *st = e->st[ES_VANISHED_UNTIL];
	int64_t until = 0;
	int rc;

	sqlite3_bind_blob(st, 1, pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
	rc = erase_fetch(e, st, &until);
	return rc <= 0 ? rc : created_at <= until;
}

static int erase_gift_wrap_vanished(struct erase *e, const struct event *ev)
{
	for (uint32_t i = 0; i < ev->ntags; i++) {
		uint8_t to[EVENT_PUBKEY_LEN];
		int rc;

		if (ev->tags[i].name != 'p' ||
		    hex_decode(ev->tags[i].value, ev->tags[i].value_len, to, sizeof(to)))
			continue;
		rc = erase_vanished(e, to, ev->created_at);
		if (rc)
			return rc;
	}
	return 0;
}

static int erase_id_deleted(struct erase *e, const struct event *ev)
{
	sqlite3_stmt *st = e->st[ES_IS_DELETED_ID];

	sqlite3_bind_blob(st, 1, ev->id, EVENT_ID_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, ev->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
	return erase_fetch(e, st, NULL);
}

static int erase_addr_deleted(struct erase *e, const struct event *ev)
{
	sqlite3_stmt *st = e->st[ES_DELETED_ADDR_UNTIL];
	enum event_class cls = event_class_of(ev->kind);
	const char *addr = "";
	uint32_t addr_len = 0;
	int64_t until = 0;
	int rc;

	if (cls != EVENT_REPLACEABLE && cls != EVENT_ADDRESSABLE)
		return 0;
	if (cls == EVENT_ADDRESSABLE && !(addr = event_tag_value(ev, 'd', &addr_len)))
		addr = "";
	sqlite3_bind_blob(st, 1, ev->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, ev->kind);
	sqlite3_bind_text(st, 3, addr, (int)addr_len, SQLITE_STATIC);
	rc = erase_fetch(e, st, &until);
	return rc <= 0 ? rc : ev->created_at <= until;
}

int erase_refuses(struct erase *e, const struct event *ev, const char **why)
{
	sqlite3_stmt *banned = e->st[ES_IS_BANNED];
	int rc;

	sqlite3_bind_blob(banned, 1, ev->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
	if ((rc = erase_fetch(e, banned, NULL))) {
		*why = "blocked: this pubkey is banned";
		return rc;
	}
	if (ev->kind != KIND_VANISH && (rc = erase_vanished(e, ev->pubkey, ev->created_at))) {
		*why = "blocked: the author of this event asked this relay to forget them";
		return rc;
	}
	if (ev->kind == KIND_GIFT_WRAP && (rc = erase_gift_wrap_vanished(e, ev))) {
		*why = "blocked: the recipient of this gift wrap asked this relay to forget them";
		return rc;
	}
	/* A kind 5 or 62 is never deleted by id, so a tombstone naming one
	 * (written before or after it arrived) must not refuse it either. */
	if ((ev->kind != KIND_DELETION && ev->kind != KIND_VANISH && (rc = erase_id_deleted(e, ev))) ||
	    (rc = erase_addr_deleted(e, ev))) {
		*why = "blocked: this event was deleted by its author";
		return rc;
	}
	return 0;
}

/* An `e` tag: delete that id if it is the author's, and remember it. */
static int erase_by_id(struct erase *e, const struct event *del, const struct event_tag *t)
{
	uint8_t id[EVENT_ID_LEN];
	sqlite3_stmt *st;

	if (hex_decode(t->value, t->value_len, id, sizeof(id)))
		return 0;
	for (int which = ES_DELETE_BY_ID; which <= ES_TOMBSTONE_ID; which++) {
		st = e->st[which];
		sqlite3_bind_blob(st, 1, id, EVENT_ID_LEN, SQLITE_STATIC);
		sqlite3_bind_blob(st, 2, del->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
		if (erase_run(e, st))
			return ERR_DB;
	}
	return 0;
}

/* Splits "kind:pubkey:d" (d may contain ':').  Returns 0 if well-formed. */
static int erase_parse_addr(const struct event_tag *t, uint32_t *kind, uint8_t pubkey[32],
			    const char **d, uint32_t *d_len)
{
	const char *v = t->value, *end = v + t->value_len, *colon = memchr(v, ':', t->value_len);
	char *stop;
	unsigned long k;

	/* strtoul alone would also take a sign or leading spaces */
	if (!colon || colon == v || end - colon < 1 + 64 + 1 || colon[65] != ':' ||
	    *v < '0' || *v > '9')
		return ERR_INVAL;
	k = strtoul(v, &stop, 10);
	if (stop != colon || k > EVENT_KIND_MAX || hex_decode(colon + 1, 64, pubkey, 32))
		return ERR_INVAL;
	*kind = (uint32_t)k;
	*d = colon + 66;
	*d_len = (uint32_t)(end - *d);
	return 0;
}

/* An `a` tag of the author's own: every version up to the request's time. */
static int erase_by_addr(struct erase *e, const struct event *del, const struct event_tag *t)
{
	uint8_t pubkey[EVENT_PUBKEY_LEN];
	uint32_t kind, d_len;
	const char *d;

	if (erase_parse_addr(t, &kind, pubkey, &d, &d_len) ||
	    memcmp(pubkey, del->pubkey, EVENT_PUBKEY_LEN) != 0)
		return 0;
	for (int which = ES_DELETE_ADDR; which <= ES_TOMBSTONE_ADDR; which++) {
		sqlite3_stmt *st = e->st[which];

		sqlite3_bind_blob(st, 1, pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, kind);
		sqlite3_bind_text(st, 3, d, (int)d_len, SQLITE_STATIC);
		sqlite3_bind_int64(st, 4, del->created_at);
		if (erase_run(e, st))
			return ERR_DB;
	}
	return 0;
}

static int erase_deletion(struct erase *e, const struct event *del)
{
	for (uint32_t i = 0; i < del->ntags; i++) {
		const struct event_tag *t = &del->tags[i];
		int rc = 0;

		if (t->name == 'e')
			rc = erase_by_id(e, del, t);
		else if (t->name == 'a')
			rc = erase_by_addr(e, del, t);
		if (rc)
			return rc;
	}
	return 0;
}

static int erase_vanish(struct erase *e, const struct event *req)
{
	char hex[2 * EVENT_PUBKEY_LEN + 1];

	/* A `p` value as events carry it: hex, kept in its packed form. */
	hex_encode(req->pubkey, EVENT_PUBKEY_LEN, hex);
	for (int which = ES_DELETE_AUTHOR; which <= ES_TOMBSTONE_VANISH; which++) {
		sqlite3_stmt *st = e->st[which];

		if (which == ES_DELETE_WRAPS)
			tagval_bind(st, 1, hex, 2 * EVENT_PUBKEY_LEN);
		else
			sqlite3_bind_blob(st, 1, req->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, req->created_at);
		if (erase_run(e, st))
			return ERR_DB;
	}
	return 0;
}

int erase_apply(struct erase *e, const struct event *ev)
{
	if (ev->kind == KIND_DELETION)
		return erase_deletion(e, ev);
	if (ev->kind == KIND_VANISH && (ev->flags & EVENT_FLAG_VANISH_HERE))
		return erase_vanish(e, ev);
	return 0;
}
