/*
 * prio.h - lowering the CPU priority of throughput threads.
 *
 * Linux keeps a nice value per thread, so a thread can lower its own
 * without touching the rest of the process.  These functions keep no state.
 *
 * stored's writer and checkpoint thread, and relayd's signature-checking
 * lane threads, do work that batching absorbs: a commit that starts a
 * millisecond later holds a few more events.  The threads that answer
 * clients then wait less for a CPU behind them when the machine is
 * saturated (bench/RESULTS.md, items 12 and 15).
 */
#ifndef COMMON_PRIO_H
#define COMMON_PRIO_H

/*
 * Sets the calling thread's nice value to nice (0..19; 0 leaves it as it
 * is).  Threads it creates afterwards inherit it.  Returns 0, or ERR_IO,
 * logged, with the thread still at its old priority.
 */
int prio_set_this_thread(int nice);

/* The calling thread's nice value (-20..19). */
int prio_of_this_thread(void);

#endif
