/*
 * slice.h - a short scheduler time slice for the threads that answer
 * requests.
 *
 * Linux's EEVDF scheduler (6.12 and later) lets a thread ask for a shorter
 * slice with sched_setattr().  It then gets an earlier deadline when it
 * wakes and preempts longer-slice work sooner, while its share of the CPU
 * stays what its nice value says.  Older kernels accept the request and
 * ignore it.  These functions keep no state.
 *
 * Under a flood, every thread a REQ crosses waits for a CPU held by the
 * flood's work (bench/RESULTS.md, "Bystander").  The throughput threads
 * (signature checks, the writer) keep the kernel's default.  The setting
 * is off by default (request_slice_us = 0) because the same preemption
 * slows live delivery, whose threads are mostly the same ones
 * (bench/RESULTS.md, item 19).
 */
#ifndef COMMON_SLICE_H
#define COMMON_SLICE_H

#include <stdint.h>
#include <sys/types.h>

/* Asks for a slice of us microseconds (100..100000; 0 leaves the thread
 * as it is) for the calling thread, keeping its policy and nice value.
 * Returns 0, or ERR_IO, logged, with the thread keeping its slice. */
int slice_set_this_thread(uint32_t us);

/* The same for every thread of this process whose name starts with
 * prefix, such as the threads nng started ("nng:").  Returns how many
 * threads it set, or ERR_IO if /proc/self/task cannot be read.  A thread
 * still carrying the process's name has not named itself yet, so it waits
 * up to 2 s for those first; every thread of ours needs a name of its own. */
int slice_set_threads_named(const char *prefix, uint32_t us);

/* The slice the kernel reports for thread tid, in nanoseconds (0 when it
 * reports none: a default slice, or a kernel without custom slices). */
uint64_t slice_of_thread(pid_t tid);

#endif
