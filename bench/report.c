/* report.c - the RESULT line (see report.h). */
#include "report.h"

#include <stdio.h>
#include <string.h>

#include "stats.h"

void report_begin(struct report *r, const char *mode)
{
	r->line = (struct buf)BUF_INIT;
	buf_append_str(&r->line, "RESULT");
	report_str(r, "mode", mode);
}

static void report_key(struct report *r, const char *key)
{
	buf_append_byte(&r->line, ' ');
	buf_append_str(&r->line, key);
	buf_append_byte(&r->line, '=');
}

void report_int(struct report *r, const char *key, int64_t v)
{
	report_key(r, key);
	buf_append_int(&r->line, v);
}

void report_num(struct report *r, const char *key, double v, int decimals)
{
	char text[64];

	snprintf(text, sizeof(text), "%.*f", decimals, v);
	report_key(r, key);
	buf_append_str(&r->line, text);
}

void report_str(struct report *r, const char *key, const char *v)
{
	report_key(r, key);
	if (!*v)
		buf_append_byte(&r->line, '-');
	for (; *v; v++)
		buf_append_byte(&r->line, (*v == ' ' || *v == '=' || *v == '\t') ? '_' : *v);
}

void report_ms(struct report *r, const char *key, uint64_t ns)
{
	report_num(r, key, (double)ns / 1e6, 3);
}

static void report_hist_key(struct report *r, const char *prefix, const char *suffix,
			    uint64_t ns)
{
	char key[96];

	snprintf(key, sizeof(key), "%s_%s", prefix, suffix);
	report_ms(r, key, ns);
}

void report_hist(struct report *r, const char *prefix, const struct hist *h, int with_p90)
{
	char key[96];

	report_hist_key(r, prefix, "p50_ms", hist_percentile(h, 50));
	if (with_p90)
		report_hist_key(r, prefix, "p90_ms", hist_percentile(h, 90));
	report_hist_key(r, prefix, "p99_ms", hist_percentile(h, 99));
	report_hist_key(r, prefix, "max_ms", hist_max(h));
	snprintf(key, sizeof(key), "%s_n", prefix);
	report_int(r, key, (int64_t)hist_count(h));
}

void report_end_to(struct report *r, FILE *out)
{
	fputs(r->line.data, out);
	fputc('\n', out);
	fflush(out);
	buf_free(&r->line);
}

void report_end(struct report *r)
{
	report_end_to(r, stdout);
}
