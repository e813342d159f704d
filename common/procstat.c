/* procstat.c - the process's own figures from /proc/self (see procstat.h). */
#include "procstat.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

/* Resident pages: the second field of /proc/self/statm. */
static int procstat_rss(uint64_t *bytes)
{
	unsigned long long size, resident;
	FILE *f = fopen("/proc/self/statm", "r");
	int n = f ? fscanf(f, "%llu %llu", &size, &resident) : 0;

	if (f)
		fclose(f);
	if (n != 2)
		return ERR_IO;
	*bytes = (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
	return 0;
}

/* Linux 6.2 and later give the count as the size of /proc/self/fd; older
 * kernels need the directory read (less ".", ".." and the reading fd). */
static int procstat_fds(uint64_t *count)
{
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (stat("/proc/self/fd", &st) == 0 && st.st_size > 0) {
		*count = (uint64_t)st.st_size;
		return 0;
	}
	d = opendir("/proc/self/fd");
	if (!d)
		return ERR_IO;
	*count = 0;
	while ((e = readdir(d)))
		*count += e->d_name[0] != '.';
	closedir(d);
	if (*count)
		(*count)--;
	return 0;
}

/* Field 22 of /proc/self/stat is the start in clock ticks after boot;
 * fields are counted after the command name's closing parenthesis, which
 * may itself hold spaces and parentheses. */
static int procstat_start(uint64_t *unix_seconds)
{
	char line[1024], *p;
	unsigned long long ticks;
	struct timespec now, boot;
	FILE *f = fopen("/proc/self/stat", "r");
	size_t n = f ? fread(line, 1, sizeof(line) - 1, f) : 0;

	if (f)
		fclose(f);
	line[n] = '\0';
	p = strrchr(line, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d"
			 " %*d %*d %*d %llu", &ticks) != 1)
		return ERR_IO;
	clock_gettime(CLOCK_REALTIME, &now);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	*unix_seconds = (uint64_t)(now.tv_sec - boot.tv_sec) +
			(uint64_t)(ticks / (unsigned long long)sysconf(_SC_CLK_TCK));
	return 0;
}

int procstat_read(struct procstat *p)
{
	struct rusage ru;
	struct rlimit rl;
	int err = 0;

	memset(p, 0, sizeof(*p));
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		p->cpu_us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
			    (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		p->max_fds = rl.rlim_cur == RLIM_INFINITY ? 0 : (uint64_t)rl.rlim_cur;
	err |= procstat_rss(&p->rss_bytes);
	err |= procstat_fds(&p->open_fds);
	err |= procstat_start(&p->start_time);
	return err ? ERR_IO : 0;
}
