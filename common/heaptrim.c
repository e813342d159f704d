/* heaptrim.c - periodic malloc_trim() (see heaptrim.h). */
#include "heaptrim.h"

#include <malloc.h>

#include "deadline.h"

void heaptrim_init(struct heaptrim *t, uint32_t interval_s)
{
	*t = (struct heaptrim){ interval_s, 0, 0, 0 };
}

int heaptrim_tick(struct heaptrim *t, int64_t now_ms)
{
	int64_t started;

	if (!t->interval_s)
		return 0;
	if (!t->next_ms) {
		t->next_ms = now_ms + (int64_t)t->interval_s * 1000;
		return 0;
	}
	if (now_ms < t->next_ms)
		return 0;
	started = deadline_now_us();
	malloc_trim(0);
	t->last_us = deadline_now_us() - started;
	t->trims++;
	t->next_ms = now_ms + (int64_t)t->interval_s * 1000;
	return 1;
}
