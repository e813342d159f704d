/*
 * access.h - the operator's NIP-86 publishing rules, checked by the writer
 * for every event before it is stored:
 *   banned_events    an event banned by id is refused ("blocked:");
 *   allowed_pubkeys  when not empty, only these authors may publish;
 *   allowed_kinds    when not empty, only these kinds are accepted
 * (both "restricted:").  The tables are written only by the writer (NIP-86
 * methods run as its jobs), so the checks see every change at once.
 */
#ifndef STORED_ACCESS_H
#define STORED_ACCESS_H

#include <sqlite3.h>

#include "../common/event.h"

struct access;

/* Prepares the checks on db, the writer's connection, which must outlive
 * them.  Returns NULL without memory or when the prepare fails (logged). */
struct access *access_new(sqlite3 *db);
/* Finalizes the checks and frees a.  NULL-safe. */
void access_free(struct access *a);

/* Checks ev against the tables.  Returns 0 (allowed), 1 (refused; *why is
 * a static message) or ERR_DB (logged). */
int access_refuses(struct access *a, const struct event *ev, const char **why);

#endif
