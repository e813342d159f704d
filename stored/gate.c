/* gate.c - NIP-86 and NIP-62 rules for ephemeral events (see gate.h). */
#include "gate.h"

#include <sqlite3.h>
#include <stdlib.h>

#include "../common/log.h"
#include "access.h"
#include "db.h"
#include "erase.h"

struct gate {
	sqlite3 *db;
	struct access *access;
	struct erase *erase;
};

struct gate *gate_open(const char *path)
{
	struct gate *g = calloc(1, sizeof(*g));

	if (!g)
		return NULL;
	/* erase.h also prepares its deletions here; on a read-only connection
	 * they are never stepped. */
	if (db_open(path, false, NULL, &g->db) || !(g->access = access_new(g->db)) ||
	    !(g->erase = erase_new(g->db))) {
		log_warnx("cannot prepare the checks of ephemeral events on %s", path);
		gate_close(g);
		return NULL;
	}
	return g;
}

void gate_close(struct gate *g)
{
	if (!g)
		return;
	erase_free(g->erase);
	access_free(g->access);
	db_close(g->db);
	free(g);
}

int gate_rules_refuse(struct access *a, struct erase *e, const struct event *ev, const char **why)
{
	int refused = access_refuses(a, ev, why);

	return refused ? refused : erase_refuses(e, ev, why);
}

int gate_refuses(struct gate *g, const struct event *ev, const char **why)
{
	return gate_rules_refuse(g->access, g->erase, ev, why);
}
