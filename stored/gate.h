/*
 * gate.h - the operator's publishing rules, and a checker of them for
 * ephemeral events.
 *
 * Stored events meet the NIP-86 rules (banned ids and pubkeys, allowed
 * pubkeys and kinds) and NIP-62's vanished authors in the writer, which
 * owns those tables.  Ephemeral events never reach the writer: the rpc
 * thread hands them straight to the broadcaster.  So the rpc thread checks
 * them with the same code (access.h, erase.h) on a read-only connection of
 * its own, which sees every rule the writer has committed.  One gate per
 * thread.
 */
#ifndef STORED_GATE_H
#define STORED_GATE_H

#include "../common/event.h"

struct access;
struct erase;
struct gate;

/* The rules in the order every path applies them (the writer's ingest.c
 * and gate_refuses): NIP-86 access, then deletions, bans and vanished
 * authors.  Returns 0 (allowed), 1 (refused; *why is a static message)
 * or ERR_DB. */
int gate_rules_refuse(struct access *a, struct erase *e, const struct event *ev, const char **why);

/* Opens the database at path read-only and prepares the checks; NULL on
 * failure (logged). */
struct gate *gate_open(const char *path);
/* NULL-safe. */
void gate_close(struct gate *g);

/* Returns 0 (allowed), 1 (refused; *why is a static "blocked:" or
 * "restricted:" message) or ERR_DB. */
int gate_refuses(struct gate *g, const struct event *ev, const char **why);

#endif
