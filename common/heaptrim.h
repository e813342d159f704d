/*
 * heaptrim.h - giving the heap's free pages back to the system now and then.
 *
 * A struct heaptrim is a schedule, a plain value its ticking thread owns;
 * it holds no memory.  heaptrim_tick() calls malloc_trim() when interval
 * seconds have passed since the last trim.  Not thread-safe: one ticking
 * thread per heaptrim (relayd's loop, stored's metrics thread).
 *
 * glibc returns freed memory only from the very top of a heap.  After a
 * burst of clients or a large query the freed pages stay resident, and the
 * resident size creeps up long after the memory in use stops growing
 * (bench/RESULTS.md, "Soak").  malloc_trim() hands every free page back
 * without moving anything.
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

/* Initialises t to trim every interval_s seconds (0: never).  Cannot fail. */
void heaptrim_init(struct heaptrim *t, uint32_t interval_s);

/* Trims if due at now_ms (monotonic milliseconds, deadline_now_ms()) and
 * notes how long it took.  Returns 1 if it trimmed, else 0.  The first
 * tick only sets the schedule. */
int heaptrim_tick(struct heaptrim *t, int64_t now_ms);

#endif
