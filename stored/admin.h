/*
 * admin.h - stored's admin socket (stored-admin.ipc, nng REQ/REP, mode 0600).
 *
 * A request is a JSON object {"cmd": "stats"} or just the bare word
 * (so `nngcat --req --dial ipc://.../stored-admin.ipc --data stats --ascii`
 * works); the reply is always one JSON object.  Unknown commands get
 * {"error": "..."}.
 */
#ifndef STORED_ADMIN_H
#define STORED_ADMIN_H

#include <pthread.h>

struct stored;

/* Listens on the admin socket and starts its thread.  Returns 0 or ERR_NNG /
 * ERR_DB. */
int admin_start(struct stored *s, pthread_t *thread);

#endif
