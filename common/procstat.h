/*
 * procstat.h - the calling process's own resource figures, for the
 * standard process_* metrics.
 *
 * Read from /proc/self and getrusage(2) on demand; nothing is kept between
 * calls.  Thread-safe.  A read costs a few system calls, so callers take it
 * once a second (stored's metrics thread, a worker's stats report).
 */
#ifndef COMMON_PROCSTAT_H
#define COMMON_PROCSTAT_H

#include <stdint.h>

struct procstat {
	uint64_t rss_bytes;  /* resident memory */
	uint64_t cpu_us;     /* user plus system CPU time */
	uint64_t open_fds;   /* open file descriptors */
	uint64_t max_fds;    /* the soft RLIMIT_NOFILE */
	uint64_t start_time; /* when the process started, unix seconds */
};

/* Fills p for the calling process.  Returns 0, or ERR_IO when /proc is
 * not there or says something unexpected; the fields it could not read
 * are then 0. */
int procstat_read(struct procstat *p);

#endif
