/*
 * heaptrim.h - giving the heap's free pages back to the system now and then.
 *
 * glibc keeps what a process frees inside its heaps (one arena per few
 * threads) and returns only what lies at a heap's very top.  After a burst
 * (a thousand clients connecting at once, a large query's rows) the freed
 * memory stays resident, and every later burst touches a slightly
 * different part of it, so the resident size keeps creeping up long after
 * the memory in use has stopped growing (bench/RESULTS.md, "Soak": a
 * worker 30 MB resident with 1.5 MB in use).  malloc_trim() hands every
 * free page back (MADV_DONTNEED) without moving anything.
 *
 * A heaptrim is driven by a thread that ticks anyway (relayd's loop once a
 * second, stored's metrics thread): heaptrim_tick() trims when interval
 * seconds have passed since the last trim.  Not thread-safe: one ticking
 * thread per heaptrim.
 */
#ifndef COMMON_HEAPTRIM_H
#define COMMON_HEAPTRIM_H

#include <stdint.h>

struct heaptrim {
	uint32_t interval_s; /* 0: never */
	int64_t next_ms;     /* monotonic; 0 before the first tick */
	uint64_t trims;      /* trims done */
	int64_t last_us;     /* how long the last one took */
};

/* Starts a heaptrim that trims every interval_s seconds (0: never). */
void heaptrim_init(struct heaptrim *t, uint32_t interval_s);

/* Trims if due at now_ms (monotonic milliseconds; the first tick only sets
 * the schedule).  Returns whether it trimmed. */
int heaptrim_tick(struct heaptrim *t, int64_t now_ms);

#endif
