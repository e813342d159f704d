/*
 * deadline.h - the absolute time a bounded wait ends at, and the project's
 * monotonic clock.
 *
 * pthread_cond_timedwait() takes an absolute time on the condition
 * variable's clock (CLOCK_REALTIME unless its attributes chose
 * CLOCK_MONOTONIC); callers think in milliseconds from now.
 * deadline_now_ms() and deadline_now_us() read the monotonic clock for
 * intervals.  All functions are thread-safe.
 */
#ifndef COMMON_DEADLINE_H
#define COMMON_DEADLINE_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* *out = now on clock + timeout_ms (>= 0), normalised (tv_nsec < 1e9). */
void deadline_after_ms(struct timespec *out, clockid_t clock, int timeout_ms);

/* Initialises cond to time its waits on CLOCK_MONOTONIC.  Returns 0 or an
 * errno value.  Pass its waits deadlines from deadline_after_ms(…,
 * CLOCK_MONOTONIC, …): a clock step then neither stretches nor cuts one. */
int deadline_cond_init(pthread_cond_t *cond);

/* Milliseconds on CLOCK_MONOTONIC: for intervals ("due 1000 ms after
 * that"), never for dates. */
int64_t deadline_now_ms(void);

/* The same clock in microseconds: for timing work that takes less than a
 * millisecond. */
int64_t deadline_now_us(void);

#endif
