/*
 * subidx.h - stored's index of live subscriptions.
 *
 * A subscription is named by (worker, conn_id, sub_id) and carries the
 * worker's sub_serial, which deliveries echo.  Each of its filters is filed
 * under the filter's most selective field (ids, then authors, then a tag,
 * then kinds; a filter with none of these goes in the match-all bucket).  To
 * find the subscriptions an event matches, subidx_match() looks up only the
 * event's own id, pubkey, each indexed tag value and its kind, plus the
 * match-all bucket, then runs filter_matches() on those candidates.
 *
 * Threading: not thread-safe.  One thread (stored's broadcaster) owns the
 * index; others send it messages.
 */
#ifndef STORED_SUBIDX_H
#define STORED_SUBIDX_H

#include <stddef.h>
#include <stdint.h>

#include "../common/event.h"
#include "../common/filter.h"

#define SUBIDX_SUB_ID_MAX 256 /* bytes: 64 characters of UTF-8 */

struct subidx;

/* Creates an empty index, or NULL when out of memory. */
struct subidx *subidx_new(void);
/* Frees the index and every subscription in it.  NULL-safe. */
void subidx_free(struct subidx *idx);

/*
 * Adds subscription (worker, conn_id, sub_id) or replaces the one with the
 * same name.  Takes ownership of filters (a malloc'ed array of nfilters
 * filters) whatever the outcome.  sub_id is sub_id_len bytes (1..SUBIDX_SUB_ID_MAX, any
 * bytes).  Returns 0, ERR_INVAL (bad sub_id length) or ERR_NOMEM.
 */
int subidx_add(struct subidx *idx, uint16_t worker, uint64_t conn_id, const char *sub_id,
	       size_t sub_id_len, uint32_t sub_serial, struct filter *filters, uint32_t nfilters);

/* Removes one subscription.  Returns 0 or ERR_NOTFOUND. */
int subidx_remove(struct subidx *idx, uint16_t worker, uint64_t conn_id, const char *sub_id,
		  size_t sub_id_len);

/* Removes every subscription of a connection; returns how many. */
size_t subidx_remove_conn(struct subidx *idx, uint16_t worker, uint64_t conn_id);

/* Removes every subscription of a worker; returns how many. */
size_t subidx_remove_worker(struct subidx *idx, uint16_t worker);

/* Called once per matching subscription. */
typedef void (*subidx_match_fn)(void *arg, uint16_t worker, uint64_t conn_id,
				uint32_t sub_serial);

/*
 * Calls fn for every subscription with at least one filter that ev matches,
 * exactly once per subscription, in no particular order.  fn must not change
 * the index.  Returns the number of calls.
 */
size_t subidx_match(struct subidx *idx, const struct event *ev, subidx_match_fn fn, void *arg);

/* Called once per subscription by subidx_foreach(); a nonzero return stops
 * the walk.  The pointers borrow from the index and are valid only during
 * the call. */
typedef int (*subidx_visit_fn)(void *arg, uint16_t worker, uint64_t conn_id, const char *sub_id,
			       size_t sub_id_len, uint32_t sub_serial, const struct filter *filters,
			       uint32_t nfilters);

/*
 * Calls fn for every subscription in the index, each once, in no particular
 * order, until fn returns nonzero (for listings: stored's admin socket).  fn
 * must not change the index.  Returns the number of calls.
 */
size_t subidx_foreach(const struct subidx *idx, subidx_visit_fn fn, void *arg);

/* Number of subscriptions in the index. */
size_t subidx_count(const struct subidx *idx);

/* Number of subscriptions a worker has. */
size_t subidx_count_worker(const struct subidx *idx, uint16_t worker);

#endif
