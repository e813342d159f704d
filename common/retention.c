/* retention.c - parsing retention rules and their SQL (see retention.h). */
#include "retention.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "err.h"

static int retention_number(const char **p, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	while (isspace((unsigned char)**p))
		(*p)++;
	if (!isdigit((unsigned char)**p))
		return ERR_CONFIG;
	v = strtoul(*p, &end, 10);
	if (v > max)
		return ERR_CONFIG;
	*out = (uint32_t)v;
	*p = end;
	while (isspace((unsigned char)**p))
		(*p)++;
	return 0;
}

/* "7,1984,20000-29999" or "*", up to the ':'. */
static int retention_kinds(const char **p, struct retention_rule *rule)
{
	while (isspace((unsigned char)**p))
		(*p)++;
	if (**p == '*') {
		(*p)++;
		while (isspace((unsigned char)**p))
			(*p)++;
		rule->nranges = 0;
		return 0;
	}
	for (;;) {
		uint32_t lo, hi;

		if (rule->nranges == RETENTION_MAX_RANGES || retention_number(p, 65535, &lo))
			return ERR_CONFIG;
		hi = lo;
		if (**p == '-' && ((*p)++, retention_number(p, 65535, &hi) || hi < lo))
			return ERR_CONFIG;
		rule->lo[rule->nranges] = lo;
		rule->hi[rule->nranges++] = hi;
		if (**p != ',')
			return 0;
		(*p)++;
	}
}

int retention_parse(const char *text, struct retention *out, char *err, size_t err_len)
{
	const char *p = text;

	memset(out, 0, sizeof(*out));
	while (*p) {
		struct retention_rule *rule = &out->rule[out->nrules];

		while (isspace((unsigned char)*p) || *p == ';')
			p++;
		if (!*p)
			break;
		if (out->nrules == RETENTION_MAX_RULES || retention_kinds(&p, rule) || *p++ != ':' ||
		    retention_number(&p, 1000000, &rule->days) || (*p && *p != ';')) {
			snprintf(err, err_len,
				 "retention rule %u is not KINDS:DAYS (KINDS: * or 1,7,30000-39999)",
				 out->nrules + 1);
			return ERR_CONFIG;
		}
		out->nrules++;
	}
	return 0;
}

static int retention_kind_test(const struct retention_rule *rule, struct buf *out)
{
	char part[64];
	int failed = buf_append_str(out, "(");

	if (rule->nranges == 0)
		return failed || buf_append_str(out, "1)") ? ERR_NOMEM : 0;
	for (uint32_t i = 0; i < rule->nranges; i++) {
		snprintf(part, sizeof(part), "%skind BETWEEN %u AND %u", i ? " OR " : "", rule->lo[i],
			 rule->hi[i]);
		failed |= buf_append_str(out, part);
	}
	return failed || buf_append_str(out, ")") ? ERR_NOMEM : 0;
}

int retention_where(const struct retention *r, uint32_t i, int64_t now, struct buf *out)
{
	char part[64];
	int failed;

	snprintf(part, sizeof(part), "created_at < %lld AND ",
		 (long long)(now - (int64_t)r->rule[i].days * 86400));
	failed = buf_append_str(out, part) || retention_kind_test(&r->rule[i], out);
	for (uint32_t j = 0; j < i && !failed; j++)
		failed = buf_append_str(out, " AND NOT ") || retention_kind_test(&r->rule[j], out);
	return failed ? ERR_NOMEM : 0;
}
