/* ingest.c - store/duplicate/replace decisions for one event (see ingest.h). */
#include "ingest.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/err.h"
#include "../common/log.h"
#include "access.h"
#include "erase.h"
#include "gate.h"
#include "tagval.h"

enum ingest_stmt {
	ST_INSERT_EVENT,
	ST_INSERT_TAG,
	ST_FIND_ID,
	ST_FIND_VERSION,
	ST_DELETE_EVENT,
	ST_COUNT
};

static const char *const ingest_sql[ST_COUNT] = {
	[ST_INSERT_EVENT] = "INSERT INTO events(id, pubkey, created_at, kind, addr, expires_at, json)"
			    " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT(id) DO NOTHING",
	[ST_INSERT_TAG] = "INSERT INTO tags(seq, name, value, created_at) VALUES(?1, ?2, ?3, ?4)",
	[ST_FIND_ID] = "SELECT 1 FROM events WHERE id = ?1",
	[ST_FIND_VERSION] = "SELECT seq, created_at, id, expires_at IS NOT NULL AND expires_at <= ?4"
			    " FROM events WHERE pubkey = ?1 AND kind = ?2 AND addr = ?3",
	/* The events_cleanup trigger removes its tags and text too. */
	[ST_DELETE_EVENT] = "DELETE FROM events WHERE seq = ?1",
};

struct ingest {
	sqlite3 *db;
	sqlite3_stmt *st[ST_COUNT];
	struct erase *erase;
	struct access *access;
};

struct ingest *ingest_new(sqlite3 *db)
{
	struct ingest *in = calloc(1, sizeof(*in));

	if (!in)
		return NULL;
	in->db = db;
	in->erase = erase_new(db);
	in->access = access_new(db);
	if (!in->erase || !in->access) {
		erase_free(in->erase);
		access_free(in->access);
		free(in);
		return NULL;
	}
	for (int i = 0; i < ST_COUNT; i++) {
		if (sqlite3_prepare_v3(db, ingest_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &in->st[i],
				       NULL) != SQLITE_OK) {
			log_warnx("sqlite prepare: %s", sqlite3_errmsg(db));
			ingest_free(in);
			return NULL;
		}
	}
	return in;
}

void ingest_free(struct ingest *in)
{
	if (!in)
		return;
	for (int i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(in->st[i]);
	erase_free(in->erase);
	access_free(in->access);
	free(in);
}

/* Runs a statement that returns no rows we need; resets it. */
static int ingest_step_done(struct ingest *in, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		log_warnx("sqlite: %s", sqlite3_errmsg(in->db));
		return ERR_DB;
	}
	return 0;
}

static int ingest_id_exists(struct ingest *in, const struct event *ev, int *exists)
{
	sqlite3_stmt *st = in->st[ST_FIND_ID];
	int rc;

	sqlite3_bind_blob(st, 1, ev->id, EVENT_ID_LEN, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	*exists = rc == SQLITE_ROW;
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : ERR_DB;
}

static int ingest_delete(struct ingest *in, int64_t seq)
{
	sqlite3_bind_int64(in->st[ST_DELETE_EVENT], 1, seq);
	return ingest_step_done(in, in->st[ST_DELETE_EVENT]);
}

/*
 * Looks for stored versions of ev's address.  Sets *superseded when one of
 * them wins over ev; otherwise deletes them all (there is normally one).
 * An expired version wins over nothing: from the second it expired it is
 * gone for readers (NIP-40), so it goes now, as the disk job would take it.
 */
static int ingest_replace_versions(struct ingest *in, const struct event *ev, const char *addr,
				   uint32_t addr_len, int *superseded)
{
	sqlite3_stmt *st = in->st[ST_FIND_VERSION];
	int64_t losers[8];
	int nlosers = 0, rc;

	*superseded = 0;
	sqlite3_bind_blob(st, 1, ev->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, ev->kind);
	sqlite3_bind_text(st, 3, addr, (int)addr_len, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)time(NULL));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const void *old_id = sqlite3_column_blob(st, 2);

		if (!sqlite3_column_int(st, 3) && sqlite3_column_bytes(st, 2) == EVENT_ID_LEN &&
		    !event_newer(ev->created_at, ev->id, sqlite3_column_int64(st, 1), old_id))
			*superseded = 1;
		else if (nlosers < 8)
			losers[nlosers++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return ERR_DB;
	for (int i = 0; i < nlosers && !*superseded; i++)
		if (ingest_delete(in, losers[i]))
			return ERR_DB;
	return 0;
}

static int ingest_insert_tags(struct ingest *in, const struct event *ev, int64_t seq)
{
	sqlite3_stmt *st = in->st[ST_INSERT_TAG];
	char name[2] = { 0, 0 };

	for (uint32_t i = 0; i < ev->ntags; i++) {
		name[0] = ev->tags[i].name;
		sqlite3_bind_int64(st, 1, seq);
		sqlite3_bind_text(st, 2, name, 1, SQLITE_TRANSIENT);
		tagval_bind(st, 3, ev->tags[i].value, ev->tags[i].value_len);
		sqlite3_bind_int64(st, 4, ev->created_at);
		if (ingest_step_done(in, st))
			return ERR_DB;
	}
	return 0;
}

static enum ingest_outcome ingest_insert(struct ingest *in, const struct event *ev,
					 const char *addr, uint32_t addr_len, int64_t *seq)
{
	sqlite3_stmt *st = in->st[ST_INSERT_EVENT];

	sqlite3_bind_blob(st, 1, ev->id, EVENT_ID_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, ev->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, ev->created_at);
	sqlite3_bind_int64(st, 4, ev->kind);
	if (addr)
		sqlite3_bind_text(st, 5, addr, (int)addr_len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 5);
	if (ev->expiration)
		sqlite3_bind_int64(st, 6, ev->expiration);
	else
		sqlite3_bind_null(st, 6);
	sqlite3_bind_text(st, 7, ev->json, (int)ev->json_len, SQLITE_STATIC);
	if (ingest_step_done(in, st))
		return INGEST_FAILED;
	if (sqlite3_changes(in->db) == 0)
		return INGEST_DUPLICATE;
	*seq = sqlite3_last_insert_rowid(in->db);
	if (ingest_insert_tags(in, ev, *seq) ||
	    erase_apply(in->erase, ev))
		return INGEST_FAILED;
	return INGEST_STORED;
}

enum ingest_outcome ingest_event(struct ingest *in, const struct event *ev, int64_t *seq,
				 const char **why)
{
	enum event_class cls = event_class_of(ev->kind);
	const char *addr = NULL;
	uint32_t addr_len = 0;
	int exists, superseded, refused;

	refused = gate_rules_refuse(in->access, in->erase, ev, why);
	if (refused)
		return refused < 0 ? INGEST_FAILED : INGEST_REFUSED;
	if (cls == EVENT_REGULAR)
		return ingest_insert(in, ev, NULL, 0, seq);
	if (cls == EVENT_ADDRESSABLE)
		addr = event_tag_value(ev, 'd', &addr_len);
	if (!addr)
		addr = "";
	if (ingest_id_exists(in, ev, &exists))
		return INGEST_FAILED;
	if (exists)
		return INGEST_DUPLICATE;
	if (ingest_replace_versions(in, ev, addr, addr_len, &superseded))
		return INGEST_FAILED;
	if (superseded)
		return INGEST_SUPERSEDED;
	return ingest_insert(in, ev, addr, addr_len, seq);
}
