/* prio.c - per-thread nice values (see prio.h). */
#include "prio.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "err.h"
#include "log.h"

/* setpriority() with PRIO_PROCESS and a thread id acts on that thread only
 * (Linux); glibc 2.36 has gettid() but the syscall says what is meant. */
static id_t prio_this_tid(void)
{
	return (id_t)syscall(SYS_gettid);
}

int prio_set_this_thread(int nice)
{
	if (nice == 0)
		return 0;
	if (setpriority(PRIO_PROCESS, prio_this_tid(), nice)) {
		log_warn("cannot set a thread's nice value to %d", nice);
		return ERR_IO;
	}
	return 0;
}

int prio_of_this_thread(void)
{
	return getpriority(PRIO_PROCESS, prio_this_tid());
}
