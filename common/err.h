/*
 * err.h - the project's one error convention.
 *
 * Every fallible function returns int: 0 on success, a negative ERR_* code on
 * failure.  err_name() turns a code into a stable lowercase word for logs.
 */
#ifndef COMMON_ERR_H
#define COMMON_ERR_H

enum err_code {
	ERR_OK = 0,
	ERR_NOMEM = -1,     /* allocation failed */
	ERR_INVAL = -2,     /* argument or input is malformed */
	ERR_TRUNC = -3,     /* input ended before the value did */
	ERR_TRAILING = -4,  /* input has bytes after the value */
	ERR_VERSION = -5,   /* wire version not understood */
	ERR_TYPE = -6,      /* message type not understood or not expected */
	ERR_TOOBIG = -7,    /* value exceeds a configured or wire limit */
	ERR_IO = -8,        /* system call failed; errno says why */
	ERR_DB = -9,        /* SQLite failed */
	ERR_NNG = -10,      /* nng failed */
	ERR_NOTFOUND = -11, /* no such key */
	ERR_FULL = -12,     /* bounded queue or table is full */
	ERR_CLOSED = -13,   /* peer or object has gone away */
	ERR_CONFIG = -14,   /* configuration rejected */
	ERR_SIG = -15,      /* signature does not verify */
	ERR_TIMEOUT = -16,  /* a bounded wait ran out */
};

/* Returns a static name for code ("nomem", "inval", ...); "unknown" otherwise. */
const char *err_name(int code);

#endif
