/* slice.c - per-thread EEVDF slices through sched_setattr() (see slice.h). */
#include "slice.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "log.h"

/* The first version of the kernel's struct sched_attr (48 bytes), which
 * glibc 2.36 does not declare; sched_runtime is the slice for the fair
 * class since Linux 6.12. */
struct slice_attr {
	uint32_t size;
	uint32_t sched_policy;
	uint64_t sched_flags;
	int32_t sched_nice;
	uint32_t sched_priority;
	uint64_t sched_runtime;
	uint64_t sched_deadline;
	uint64_t sched_period;
};

static int slice_get(pid_t tid, struct slice_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	return (int)syscall(SYS_sched_getattr, tid, attr, sizeof(*attr), 0);
}

static int slice_set(pid_t tid, uint32_t us)
{
	struct slice_attr attr;

	if (us == 0)
		return 0;
	/* Policy, nice and priority as they are: sched_setattr() sets all. */
	if (slice_get(tid, &attr))
		return ERR_IO;
	attr.size = sizeof(attr);
	attr.sched_flags = 0;
	attr.sched_runtime = (uint64_t)us * 1000;
	return syscall(SYS_sched_setattr, tid, &attr, 0) ? ERR_IO : 0;
}

int slice_set_this_thread(uint32_t us)
{
	if (slice_set((pid_t)syscall(SYS_gettid), us)) {
		log_warn("cannot set a thread's scheduler slice to %u us", us);
		return ERR_IO;
	}
	return 0;
}

/* The name of thread tid of this process ("" if it cannot be read). */
static void slice_thread_name(const char *tid, char *out, size_t len)
{
	char path[300]; /* a d_name is at most 255 bytes */
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	if (!(f = fopen(path, "r")))
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = '\0';
	fclose(f);
}

/* True if a thread other than the main one still carries the process's
 * name (the main thread's): it has not named itself yet. */
static bool slice_some_thread_unnamed(void)
{
	char main_tid[16], main_name[32], name[32];
	bool unnamed = false;
	struct dirent *e;
	DIR *dir;

	snprintf(main_tid, sizeof(main_tid), "%d", (int)getpid());
	slice_thread_name(main_tid, main_name, sizeof(main_name));
	if (!main_name[0] || !(dir = opendir("/proc/self/task")))
		return false;
	while (!unnamed && (e = readdir(dir))) {
		if (e->d_name[0] == '.' || strcmp(e->d_name, main_tid) == 0)
			continue;
		slice_thread_name(e->d_name, name, sizeof(name));
		unnamed = strcmp(name, main_name) == 0;
	}
	closedir(dir);
	return unnamed;
}

/* How long slice_set_threads_named waits for threads to name themselves. */
#define SLICE_NAMES_WAIT_MS 2000

int slice_set_threads_named(const char *prefix, uint32_t us)
{
	struct timespec pause = { 0, 5 * 1000000L };
	DIR *dir;
	struct dirent *e;
	char name[32];
	int count = 0;

	if (us == 0)
		return 0;
	/* A library's thread names itself once it runs (nng's do): one
	 * started a moment ago still has the process's name and would be
	 * missed.  Under a sanitizer that moment was long enough to see. */
	for (int waited = 0; waited < SLICE_NAMES_WAIT_MS && slice_some_thread_unnamed(); waited += 5)
		nanosleep(&pause, NULL);
	if (!(dir = opendir("/proc/self/task")))
		return ERR_IO;
	while ((e = readdir(dir))) {
		if (e->d_name[0] == '.')
			continue;
		slice_thread_name(e->d_name, name, sizeof(name));
		if (strncmp(name, prefix, strlen(prefix)) == 0 &&
		    slice_set((pid_t)atoi(e->d_name), us) == 0)
			count++;
	}
	closedir(dir);
	if (us && count == 0)
		log_debug("no thread named %s* took a scheduler slice", prefix);
	return count;
}

uint64_t slice_of_thread(pid_t tid)
{
	struct slice_attr attr;

	return slice_get(tid, &attr) ? 0 : attr.sched_runtime;
}
