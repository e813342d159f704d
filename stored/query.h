/*
 * query.h - the pool of threads that answer REQ history.
 *
 * Each thread owns a read-only SQLite connection (WAL: readers never block
 * the writer or each other).  A query_job runs each of its filters, skips
 * events already sent for an earlier filter, and streams the rows back as
 * QUERY_EVENTS chunks (bounded in bytes, so no reply exceeds nng's receive
 * limit), the last of them as QUERY_LAST, which carries the EOSE too; a
 * query that fails ends with QUERY_DONE (CLOSED) instead.
 */
#ifndef STORED_QUERY_H
#define STORED_QUERY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../common/config.h"

struct filter;
struct query_job;
struct stored;

/* Largest payload of one QUERY_EVENTS message (events beyond go in the next). */
#define QUERY_CHUNK_BYTES (256 * 1024)

/* How long a connection stays heavy after a query that cost
 * query_heavy_ms of CPU or more (query_threads_light), and known cheap
 * after one that cost less.  The heavy mark lasts longer: a client that
 * keeps its cheap mark fresh with small REQs gets a kept thread for one
 * dear query each time its heavy mark runs out, so once a minute, not
 * every ten seconds; and a client that made one dear query is held only
 * while heavy clients fill the other threads. */
#define QUERY_HEAVY_FOR_MS 60000
#define QUERY_CHEAP_FOR_MS 10000

/* Queues job for the pool, behind the jobs of the connection it answers
 * (stored/turnqueue.h).  Returns NULL once queued (the pool owns it), or
 * the message of the CLOSED its client must get: the queue was full, or
 * full for that connection (the job stays the caller's). */
const char *query_submit(struct stored *s, struct query_job *job);

/* Of the query_threads, those kept for connections known cheap:
 * query_threads_light, at most query_threads - 1 (one at least must take
 * heavy and new connections' queries). */
size_t query_threads_kept(const struct config *cfg);

/* Starts n threads (query_threads): the first query_threads_kept() take
 * only cheap connections' jobs at the priority of the threads that answer
 * clients, the others any job at nice query_nice.  Returns 0 or ERR_DB /
 * ERR_NOMEM. */
int query_start(struct stored *s, pthread_t *threads, size_t n);

/* True if any of the filters is a NIP-50 search this relay serves: it
 * must wait for the search index first (search_watermark_await). */
bool query_searches(const struct stored *s, const struct filter *filters, uint32_t n);

#endif
