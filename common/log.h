/*
 * log.h - one small logging module for every process.
 *
 * Lines go to stderr as "<process>[@instance]: <level>: <message>".
 * journald timestamps each line itself, so a line carries its own UTC
 * time in front ("2026-01-31T12:00:00.000Z ") only when stderr is not the
 * journal.  The format json writes one JSON object per line instead, for
 * log shippers: {"time", "process", "instance", "level", "message"}.  The
 * module owns the process's tag, level and format.  main() sets the tag
 * before any thread starts; the level and format may change at any time,
 * and every other call is thread-safe.  The level is checked before
 * formatting, so a disabled log_debug() costs a comparison.  A message is
 * cut at about 1,000 bytes.
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };
enum log_format { LOG_FORMAT_TEXT = 0, LOG_FORMAT_JSON = 1 };

/* Sets the tag and the most verbose level printed.  The tag is process
 * ("stored"), or process@instance for an instance > 0 ("relayd@2"). */
void log_init(const char *process, int instance, enum log_level level);
/* Changes the most verbose level printed; for a config reload. */
void log_set_level(enum log_level level);
/* Parses "error", "warn", "info", "debug"; returns -1 for anything else. */
int log_level_parse(const char *name);
/* Parses "text", "json"; returns -1 for anything else. */
int log_format_parse(const char *name);
/* Changes how lines are written; text until called. */
void log_set_format(enum log_format format);
/* True when stderr is the journal: systemd then sets JOURNAL_STREAM to
 * "DEVICE:INODE" of the stream it gave the service, and stderr's fstat()
 * must match both (a child whose stderr was redirected keeps the variable).
 * Checked for every line, so a redirection later is seen. */
int log_to_journal(void);
/* True when lines at level would be printed. */
int log_enabled(enum log_level level);

/* A warning with strerror(errno) appended after ": "; errno is read first. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A warning without errno; log_info() and log_debug() likewise at theirs. */
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For a broken invariant: logs at LOG_ERROR, always, and exits with 1, so
 * systemd restarts the process.  Never returns. */
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
