/*
 * iplimit.h - per-address limits of one worker (service thread only).
 *
 * Each address that has a connection, or had one recently, has an entry:
 * its open connections and two token buckets, one for EVENT and one for
 * REQ/COUNT, refilled at the configured rate up to the burst size.  A
 * message that finds its bucket empty is answered "rate-limited:" and
 * counts a strike; a connection past the strike limit is closed.  Entries
 * of addresses with no connection left are swept once their buckets are
 * full again, so memory follows the connections, not the history.
 *
 * The limits hold per worker: with N workers an address may use up to N
 * times them (the kernel spreads its connections across workers).
 * Loopback addresses are exempt unless limit_loopback is set.
 */
#ifndef RELAYD_IPLIMIT_H
#define RELAYD_IPLIMIT_H

#include <stdbool.h>
#include <stdint.h>

struct config;
struct iplimit;

enum iplimit_kind { IPLIMIT_EVENT, IPLIMIT_REQ };

/* Creates an empty table reading its limits from cfg (kept by pointer). */
struct iplimit *iplimit_new(const struct config *cfg);
/* Reads the limits from cfg from now on (a reloaded snapshot). */
void iplimit_set_config(struct iplimit *t, const struct config *cfg);
/* Frees t and its entries. */
void iplimit_free(struct iplimit *t);

/* A connection from ip opens: false (and nothing counted) when ip already
 * has max_connections_per_ip.  *counted: whether it was counted (not for an
 * exempt address); pass it back to iplimit_disconnect(). */
bool iplimit_connect(struct iplimit *t, const char *ip, int64_t now_ms, bool *counted);
/* A connection from ip closed; counted as iplimit_connect() said. */
void iplimit_disconnect(struct iplimit *t, const char *ip, bool counted);
/* Takes one token of kind for ip; false when the bucket is empty (a strike
 * is counted then). */
bool iplimit_take(struct iplimit *t, const char *ip, enum iplimit_kind kind, int64_t now_ms);
/* Strikes ip has (recent rate-limited messages; halves every sweep). */
uint32_t iplimit_strikes(struct iplimit *t, const char *ip);
/* Forgets idle addresses and decays strikes; call about once a second. */
void iplimit_sweep(struct iplimit *t, int64_t now_ms);
/* Addresses tracked now. */
uint32_t iplimit_count(const struct iplimit *t);

#endif
