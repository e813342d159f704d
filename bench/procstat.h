/*
 * procstat.h - what the relay's processes and this load generator spend.
 *
 * The relay is several processes (stored and each relayd); their pids come
 * from --pids as a comma-separated list.  A struct usage_meter takes a
 * snapshot of their CPU time (utime + stime from /proc/PID/stat, summed over
 * all threads) and of this process's own CPU (getrusage) at start, samples
 * their resident memory (/proc/PID/statm) whenever asked, and at the end
 * reports CPU as a percentage of one core over the wall time between the two
 * snapshots (so 2 cores fully busy read 200%).
 *
 * It also reads the machine's busy time (/proc/stat) so a report can say how
 * much CPU went to anything other than the relay and this process: on a
 * shared machine that is what makes a run trustworthy or not.  On a
 * virtual machine it also reads the time the host kept the machine's own
 * CPUs from running ("steal"): latency measured while the host takes a
 * large share is the host's as much as the relay's.
 *
 * A pid that has gone away counts as 0 and is reported in `lost`.
 */
#ifndef BENCH_PROCSTAT_H
#define BENCH_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

#define PROCSTAT_MAX_PIDS 32

struct usage_meter {
	int npids;
	pid_t pids[PROCSTAT_MAX_PIDS];
	uint64_t t0_ns;
	double relay_cpu0_s;
	double self_cpu0_s;
	double machine_busy0_s;
	double machine_steal0_s;
	uint64_t rss_peak_kb; /* largest sum seen by usage_sample() */
};

struct usage_report {
	double wall_s;
	double relay_cpu_pct; /* of one core, all relay processes together */
	double self_cpu_pct;  /* of one core, every thread of this process */
	double other_cpu_pct; /* of one core: the machine's busy time minus both */
	double steal_pct;     /* of one core: time the host kept our CPUs waiting */
	uint64_t rss_kb;      /* sum now */
	uint64_t rss_peak_kb; /* largest sum sampled */
	int lost;             /* pids that could not be read at the end */
};

/*
 * Fills m->pids from "123,456,789" (NULL or "" means none).  Returns 0, or
 * ERR_INVAL for text that is not a list of positive integers or has more
 * than PROCSTAT_MAX_PIDS entries.
 */
int usage_parse_pids(struct usage_meter *m, const char *list);

/* Takes the starting snapshot (CPU of the relay and of this process). */
void usage_start(struct usage_meter *m);

/* Samples the relay's summed RSS, keeps the peak, and returns the sum in KiB. */
uint64_t usage_sample(struct usage_meter *m);

/* Fills out with the usage since usage_start(). */
void usage_finish(struct usage_meter *m, struct usage_report *out);

/* CPU seconds (utime + stime) of pid, or a negative value when unreadable. */
double procstat_cpu_s(pid_t pid);

/* Busy CPU seconds of the whole machine (all cores, /proc/stat), or a
 * negative value when unreadable. */
double procstat_machine_busy_s(void);

/* CPU seconds the host stole from this virtual machine (all cores), 0 on
 * bare metal, or a negative value when unreadable. */
double procstat_machine_steal_s(void);

/* Resident set size of pid in KiB, or 0 when unreadable. */
uint64_t procstat_rss_kb(pid_t pid);

/*
 * Raises this process's RLIMIT_NOFILE to at least want descriptors where
 * allowed (the hard limit too, when privileged).  Returns the soft limit in
 * effect afterwards.
 */
long fdlimit_raise(long want);

#endif
