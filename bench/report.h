/*
 * report.h - the one machine-readable line every subcommand ends with.
 *
 *   RESULT mode=ingest conns=64 accepted_per_s=18250.3 ok_p50_ms=0.812 ...
 *
 * Keys are lowercase words joined by '_'; values never contain spaces (a
 * string value's spaces and '=' are replaced by '_').  Times are in
 * milliseconds with three decimals, rates with one.  bench/run parses these
 * lines, so a key, once published, keeps its name and unit.
 */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "../common/buf.h"

struct hist;

struct report {
	struct buf line;
};

/* Starts a line "RESULT mode=<mode>". */
void report_begin(struct report *r, const char *mode);

/* Appends key=value for an integer, a float with decimals digits, a string,
 * and a nanosecond value written as milliseconds. */
void report_int(struct report *r, const char *key, int64_t v);
void report_num(struct report *r, const char *key, double v, int decimals);
void report_str(struct report *r, const char *key, const char *v);
void report_ms(struct report *r, const char *key, uint64_t ns);

/* Appends <prefix>_p50_ms, _p90_ms (if with_p90), _p99_ms, _max_ms and
 * <prefix>_n for h. */
void report_hist(struct report *r, const char *prefix, const struct hist *h, int with_p90);

/* Prints the line to stdout, flushes, and frees the report. */
void report_end(struct report *r);

/* The same to another stream (gen writing its events to stdout uses stderr). */
void report_end_to(struct report *r, FILE *out);

#endif
