/*
 * log.h - one small logging module for every process.
 *
 * Lines go to stderr as "<process>[@instance]: <level>: <message>", which
 * journald timestamps.  The level is checked before formatting, so a
 * disabled log_debug() costs a comparison.  log_warn() appends strerror(errno);
 * log_warnx() does not.  fatalx() is for broken invariants: it logs and exits
 * non-zero so systemd restarts the process.
 */
#ifndef COMMON_LOG_H
#define COMMON_LOG_H

enum log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/* Sets the tag ("stored", or "relayd" with instance 2 -> "relayd@2"; instance
 * 0 means none) and the most verbose level printed. */
void log_init(const char *process, int instance, enum log_level level);
/* Changes the level (config reload). */
void log_set_level(enum log_level level);
/* Parses "error", "warn", "info", "debug"; returns -1 for anything else. */
int log_level_parse(const char *name);
/* True when lines at level would be printed. */
int log_enabled(enum log_level level);

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void fatalx(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif
