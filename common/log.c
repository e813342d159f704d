/* log.c - process-tagged, level-filtered logging to stderr (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Set once at start-up by main() before any thread exists; the level is
 * read racily by design (a stale level for one line is harmless). */
static char log_tag[32] = "relay";
static volatile int log_threshold = LOG_INFO;

static const char *const log_names[] = { "error", "warn", "info", "debug" };

void log_init(const char *process, int instance, enum log_level level)
{
	if (instance > 0)
		snprintf(log_tag, sizeof(log_tag), "%s@%d", process, instance);
	else
		snprintf(log_tag, sizeof(log_tag), "%s", process);
	log_threshold = level;
}

void log_set_level(enum log_level level)
{
	log_threshold = level;
}

int log_level_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (strcmp(name, log_names[i]) == 0)
			return i;
	return -1;
}

int log_enabled(enum log_level level)
{
	return (int)level <= log_threshold;
}

static void log_emit(enum log_level level, const char *suffix, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "%s: %s: ", log_tag, log_names[level]);

	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (suffix)
		fprintf(stderr, "%s: %s\n", line, suffix);
	else
		fprintf(stderr, "%s\n", line);
}

void log_warn(const char *fmt, ...)
{
	const char *why = strerror(errno);
	va_list ap;

	if (!log_enabled(LOG_WARN))
		return;
	va_start(ap, fmt);
	log_emit(LOG_WARN, why, fmt, ap);
	va_end(ap);
}

void log_warnx(const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(LOG_WARN))
		return;
	va_start(ap, fmt);
	log_emit(LOG_WARN, NULL, fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(LOG_INFO))
		return;
	va_start(ap, fmt);
	log_emit(LOG_INFO, NULL, fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_enabled(LOG_DEBUG))
		return;
	va_start(ap, fmt);
	log_emit(LOG_DEBUG, NULL, fmt, ap);
	va_end(ap);
}

void fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit(LOG_ERROR, NULL, fmt, ap);
	va_end(ap);
	exit(1);
}
