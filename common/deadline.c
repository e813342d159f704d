/* deadline.c - absolute times for bounded waits (see deadline.h). */
#include "deadline.h"

void deadline_after_ms(struct timespec *out, clockid_t clock, int timeout_ms)
{
	clock_gettime(clock, out);
	out->tv_sec += timeout_ms / 1000;
	out->tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (out->tv_nsec >= 1000000000L) {
		out->tv_sec++;
		out->tv_nsec -= 1000000000L;
	}
}
