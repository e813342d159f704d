/*
 * retention.h - the operator's retention rules: which events to drop after
 * how long.
 *
 * Config key `retention`, rules separated by ';', each "KINDS:DAYS":
 * KINDS is `*` (every kind) or a comma list of kinds and ranges
 * ("7,1984,20000-29999"); DAYS is a whole number of days.  An event older
 * than the days of the first rule naming its kind is removed by stored's
 * periodic job.  Example: `retention = 7,6:30; *:3650` keeps reactions and
 * reposts 30 days and everything else ten years.  Empty: keep everything.
 *
 * A struct retention is a plain value with no memory of its own to free.
 */
#ifndef COMMON_RETENTION_H
#define COMMON_RETENTION_H

#include <stddef.h>
#include <stdint.h>

struct buf;

#define RETENTION_MAX_RULES 16
#define RETENTION_MAX_RANGES 32

struct retention_rule {
	uint32_t nranges;              /* 0: every kind */
	uint32_t lo[RETENTION_MAX_RANGES], hi[RETENTION_MAX_RANGES];
	uint32_t days;
};

struct retention {
	uint32_t nrules;
	struct retention_rule rule[RETENTION_MAX_RULES];
};

/* Parses text (NUL-terminated) into *out.  Returns 0, or ERR_CONFIG with
 * a reason of at most err_len bytes in err. */
int retention_parse(const char *text, struct retention *out, char *err, size_t err_len);

/*
 * Appends to out an SQL condition selecting the events rule i (< r->nrules)
 * removes at time now (unix seconds).  Those are older than its days, of
 * its kinds, and not claimed by an earlier rule, since the first rule
 * naming a kind decides.  It holds numbers only, no parameters.  Returns 0
 * or ERR_NOMEM.
 */
int retention_where(const struct retention *r, uint32_t i, int64_t now, struct buf *out);

#endif
