/* log.c - process-tagged, level-filtered logging to stderr (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Set once at start-up by main() before any thread exists; the level and
 * format are read racily by design (a stale one for one line is harmless). */
static char log_tag[32] = "relay";
static char log_process[24] = "relay";
static int log_instance;
static volatile int log_threshold = LOG_INFO;
static volatile int log_style = LOG_FORMAT_TEXT;

static const char *const log_names[] = { "error", "warn", "info", "debug" };
static const char *const log_format_names[] = { "text", "json" };

void log_init(const char *process, int instance, enum log_level level)
{
	if (instance > 0)
		snprintf(log_tag, sizeof(log_tag), "%s@%d", process, instance);
	else
		snprintf(log_tag, sizeof(log_tag), "%s", process);
	snprintf(log_process, sizeof(log_process), "%s", process);
	log_instance = instance;
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

int log_format_parse(const char *name)
{
	for (int i = 0; i < 2; i++)
		if (strcmp(name, log_format_names[i]) == 0)
			return i;
	return -1;
}

void log_set_format(enum log_format format)
{
	log_style = format;
}

int log_enabled(enum log_level level)
{
	return (int)level <= log_threshold;
}

int log_to_journal(void)
{
	const char *stream = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!stream || sscanf(stream, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st))
		return 0;
	return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* The UTC time now as RFC 3339 with milliseconds: 24 characters. */
static void log_time(char out[32])
{
	struct timespec now;
	struct tm tm;
	size_t n;

	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	n = strftime(out, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + n, 32 - n, ".%03ldZ", now.tv_nsec / 1000000);
}

/* Appends text to out (cap bytes, always NUL-terminated) as the inside of
 * a JSON string: quote, backslash and control characters escaped. */
static size_t log_json_escape(char *out, size_t used, size_t cap, const char *text)
{
	for (const unsigned char *p = (const unsigned char *)text; *p && used + 7 < cap; p++) {
		if (*p == '"' || *p == '\\')
			used += (size_t)snprintf(out + used, cap - used, "\\%c", *p);
		else if (*p < 0x20)
			used += (size_t)snprintf(out + used, cap - used, "\\u%04x", *p);
		else
			out[used++] = (char)*p;
	}
	out[used] = '\0';
	return used;
}

static void log_write_json(enum log_level level, const char *when, const char *message)
{
	char line[2 * 1024 + 256];
	size_t n = (size_t)snprintf(line, sizeof(line),
				    "{\"time\":\"%s\",\"process\":\"%s\",\"instance\":%d,"
				    "\"level\":\"%s\",\"message\":\"",
				    when, log_process, log_instance, log_names[level]);

	n = log_json_escape(line, n, sizeof(line) - 3, message);
	fprintf(stderr, "%s\"}\n", line);
}

static void log_emit(enum log_level level, const char *suffix, const char *fmt, va_list ap)
{
	char message[1000], when[32] = "";
	int n = vsnprintf(message, sizeof(message), fmt, ap);

	if (suffix && n >= 0 && (size_t)n < sizeof(message))
		snprintf(message + n, sizeof(message) - (size_t)n, ": %s", suffix);
	if (log_style == LOG_FORMAT_JSON || !log_to_journal())
		log_time(when);
	if (log_style == LOG_FORMAT_JSON)
		log_write_json(level, when, message);
	else
		fprintf(stderr, "%s%s%s: %s: %s\n", when, when[0] ? " " : "", log_tag,
			log_names[level], message);
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
