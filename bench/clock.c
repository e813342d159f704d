/* clock.c - monotonic and wall clocks (see clock.h). */
#include "clock.h"

#include <errno.h>
#include <time.h>

uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

int64_t clock_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec;
}

void clock_sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / NS_PER_S), (long)(ns % NS_PER_S) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}
