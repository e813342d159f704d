/* access.c - NIP-86 publishing rules at ingest (see access.h). */
#include "access.h"

#include <stdlib.h>

#include "../common/err.h"
#include "../common/log.h"

/* One statement answers all three rules: is the id banned, is the author
 * allowed (or the list empty), is the kind allowed (or the list empty). */
static const char access_sql[] =
	"SELECT EXISTS(SELECT 1 FROM banned_events WHERE id = ?1),"
	" NOT EXISTS(SELECT 1 FROM allowed_pubkeys)"
	"  OR EXISTS(SELECT 1 FROM allowed_pubkeys WHERE pubkey = ?2),"
	" NOT EXISTS(SELECT 1 FROM allowed_kinds)"
	"  OR EXISTS(SELECT 1 FROM allowed_kinds WHERE kind = ?3)";

struct access {
	sqlite3 *db;
	sqlite3_stmt *check;
};

struct access *access_new(sqlite3 *db)
{
	struct access *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->db = db;
	if (sqlite3_prepare_v3(db, access_sql, -1, SQLITE_PREPARE_PERSISTENT, &a->check, NULL) !=
	    SQLITE_OK) {
		log_warnx("sqlite prepare: %s", sqlite3_errmsg(db));
		free(a);
		return NULL;
	}
	return a;
}

void access_free(struct access *a)
{
	if (!a)
		return;
	sqlite3_finalize(a->check);
	free(a);
}

int access_refuses(struct access *a, const struct event *ev, const char **why)
{
	sqlite3_stmt *st = a->check;
	int rc, banned = 0, author_ok = 1, kind_ok = 1;

	sqlite3_bind_blob(st, 1, ev->id, EVENT_ID_LEN, SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, ev->pubkey, EVENT_PUBKEY_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, ev->kind);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		banned = sqlite3_column_int(st, 0);
		author_ok = sqlite3_column_int(st, 1);
		kind_ok = sqlite3_column_int(st, 2);
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW) {
		log_warnx("sqlite: %s", sqlite3_errmsg(a->db));
		return ERR_DB;
	}
	if (banned)
		*why = "blocked: this event is banned on this relay";
	else if (!author_ok)
		*why = "restricted: this relay only accepts events from allowed pubkeys";
	else if (!kind_ok)
		*why = "restricted: this relay does not accept events of this kind";
	return banned || !author_ok || !kind_ok;
}
