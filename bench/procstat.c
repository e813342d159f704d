/* procstat.c - CPU and memory of the relay and of this process (see procstat.h). */
#include "procstat.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/err.h"
#include "clock.h"

int usage_parse_pids(struct usage_meter *m, const char *list)
{
	const char *p = list;

	memset(m, 0, sizeof(*m));
	while (p && *p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v <= 0 || m->npids == PROCSTAT_MAX_PIDS || (*end && *end != ','))
			return ERR_INVAL;
		m->pids[m->npids++] = (pid_t)v;
		p = *end ? end + 1 : end;
	}
	return 0;
}

double procstat_cpu_s(pid_t pid)
{
	char path[64], text[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	/* The command name may hold spaces and ')'; the fields start after the last ')'. */
	p = strrchr(text, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* The machine's busy and stolen CPU seconds (all cores, /proc/stat's
 * first line); false when unreadable. */
static bool machine_times(double *busy_s, double *steal_s)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return false;
	/* user nice system idle iowait irq softirq steal */
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7)
		return false;
	*busy_s = (double)(v[0] + v[1] + v[2] + v[5] + v[6]) / (double)sysconf(_SC_CLK_TCK);
	*steal_s = (double)v[7] / (double)sysconf(_SC_CLK_TCK); /* 0 where the kernel has no field */
	return true;
}

double procstat_machine_busy_s(void)
{
	double busy, steal;

	return machine_times(&busy, &steal) ? busy : -1;
}

double procstat_machine_steal_s(void)
{
	double busy, steal;

	return machine_times(&busy, &steal) ? steal : -1;
}

uint64_t procstat_rss_kb(pid_t pid)
{
	char path[64];
	unsigned long long size = 0, resident = 0;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	ok = fscanf(f, "%llu %llu", &size, &resident) == 2;
	fclose(f);
	return ok ? resident * (uint64_t)sysconf(_SC_PAGESIZE) / 1024 : 0;
}

static double usage_self_cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Summed CPU of the relay's pids; *lost counts the unreadable ones. */
static double usage_relay_cpu_s(const struct usage_meter *m, int *lost)
{
	double sum = 0;

	*lost = 0;
	for (int i = 0; i < m->npids; i++) {
		double s = procstat_cpu_s(m->pids[i]);

		if (s < 0)
			++*lost;
		else
			sum += s;
	}
	return sum;
}

void usage_start(struct usage_meter *m)
{
	int lost;

	m->t0_ns = clock_ns();
	m->relay_cpu0_s = usage_relay_cpu_s(m, &lost);
	m->self_cpu0_s = usage_self_cpu_s();
	m->machine_busy0_s = procstat_machine_busy_s();
	m->machine_steal0_s = procstat_machine_steal_s();
	m->rss_peak_kb = 0;
	usage_sample(m);
}

uint64_t usage_sample(struct usage_meter *m)
{
	uint64_t sum = 0;

	for (int i = 0; i < m->npids; i++)
		sum += procstat_rss_kb(m->pids[i]);
	if (sum > m->rss_peak_kb)
		m->rss_peak_kb = sum;
	return sum;
}

void usage_finish(struct usage_meter *m, struct usage_report *out)
{
	double wall = (double)(clock_ns() - m->t0_ns) / 1e9;
	double relay = usage_relay_cpu_s(m, &out->lost) - m->relay_cpu0_s;
	double self = usage_self_cpu_s() - m->self_cpu0_s;
	double busy = procstat_machine_busy_s() - m->machine_busy0_s;
	double steal = procstat_machine_steal_s() - m->machine_steal0_s;

	out->wall_s = wall;
	out->rss_kb = usage_sample(m);
	out->rss_peak_kb = m->rss_peak_kb;
	out->relay_cpu_pct = wall > 0 ? 100.0 * relay / wall : 0;
	out->self_cpu_pct = wall > 0 ? 100.0 * self / wall : 0;
	out->other_cpu_pct = wall > 0 && busy > relay + self ? 100.0 * (busy - relay - self) / wall : 0;
	out->steal_pct = wall > 0 && steal > 0 ? 100.0 * steal / wall : 0;
}

long fdlimit_raise(long want)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	if (rl.rlim_max != RLIM_INFINITY && (long)rl.rlim_max < want) {
		struct rlimit up = { (rlim_t)want, (rlim_t)want };

		if (!setrlimit(RLIMIT_NOFILE, &up))
			return want;
	}
	if (rl.rlim_cur == RLIM_INFINITY || (long)rl.rlim_cur >= want)
		return (long)rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && (long)rl.rlim_max < want ? rl.rlim_max
										 : (rlim_t)want;
	setrlimit(RLIMIT_NOFILE, &rl);
	getrlimit(RLIMIT_NOFILE, &rl);
	return (long)rl.rlim_cur;
}
