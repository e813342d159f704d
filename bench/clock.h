/*
 * clock.h - the load generator's one clock.
 *
 * Every latency in bench/ is a difference of two clock_ns() readings taken in
 * this process, so CLOCK_MONOTONIC is enough: it is shared by all threads and
 * never jumps.  clock_wall() is only for created_at.
 */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
uint64_t clock_ns(void);

/* Seconds since the epoch (CLOCK_REALTIME), for event timestamps. */
int64_t clock_wall(void);

/* Sleeps ns nanoseconds (resumes after signals). */
void clock_sleep_ns(uint64_t ns);

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

#endif
