/* deadline.c - absolute times for bounded waits (see deadline.h). */
#include "deadline.h"

int deadline_cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int rc = pthread_condattr_init(&attr);

	if (rc)
		return rc;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return rc;
}

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

int64_t deadline_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t deadline_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
