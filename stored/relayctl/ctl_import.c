/*
 * ctl_import.c - relayctl import: JSONL events from a file or stdin into
 * stored (see ctl.h).
 *
 * The input is read in batches of at most CTL_BATCH_LINES lines and about
 * CTL_BATCH_BYTES.  Every line is judged on its own (ctl_judge.c), by one
 * thread per core; a bad line is reported by number with its reason, and
 * the import goes on.  A UTF-8 BOM at the start of the input is skipped.
 *
 * The good events of a batch go to stored in one request marked
 * "verified": their signatures were checked here, once, so stored does not
 * check them again (stored/admin.h says why it may trust the admin socket).
 * While stored ingests one batch, the threads judge the next.  stored
 * answers per event, and its refusals are reported by line number too, in
 * line order with relayctl's own.  On a terminal, stderr shows progress.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "ctl.h"

/* A batch: lines read at a time, and about this much text.  stored takes
 * up to 10000 events and 2 * max_message_bytes + 4 MiB a request.  An
 * event's canonical JSON is at most a few bytes longer than its line (a
 * number such as 1e9 written out), which the 256 KiB left over covers. */
#define CTL_BATCH_LINES 8192
#define CTL_BATCH_BYTES ((4u << 20) - (256u << 10))
#define CTL_READ_BYTES 65536

/* The summary's counters, in its order, with their --json names. */
enum ctl_count {
	CTL_N_STORED,
	CTL_N_DUPLICATE,
	CTL_N_SUPERSEDED,
	CTL_N_REFUSED,
	CTL_N_INVALID, /* stored's answer counts up to here */
	CTL_N_BLANK,
	CTL_N_EXTRA,
	CTL_NCOUNTS
};

static const char *const ctl_count_names[CTL_NCOUNTS] = {
	[CTL_N_STORED] = ADMIN_F_STORED,
	[CTL_N_DUPLICATE] = ADMIN_F_DUPLICATE,
	[CTL_N_SUPERSEDED] = ADMIN_F_SUPERSEDED,
	[CTL_N_REFUSED] = ADMIN_F_REFUSED,
	[CTL_N_INVALID] = ADMIN_F_INVALID,
	[CTL_N_BLANK] = "blank",
	[CTL_N_EXTRA] = "extra_fields",
};

/* Lines from a FILE through a buffer of its own, so a line of any length
 * costs at most max_message_bytes of memory. */
struct ctl_reader {
	FILE *in;
	char data[CTL_READ_BYTES];
	size_t pos, end;
};

struct ctl_batch {
	struct buf text;
	struct ctl_line *lines; /* CTL_BATCH_LINES */
	size_t n;
};

struct ctl_import {
	struct ctl *c;
	const char *name; /* of the input, for messages */
	struct ctl_reader reader;
	struct ctl_judges *judges;
	struct ctl_batch batch[2];
	struct buf req;
	uint32_t *sent; /* the line index in its batch of each event sent */
	unsigned long lineno, stopped_at;
	unsigned long count[CTL_NCOUNTS];
	bool eof;
	int tty;
};

/*
 * Appends the next line, '\n' included, to text and sets l->off and l->len;
 * past max bytes only l->too_long is set and the rest is skipped.  Returns
 * 1 for a line, 0 at the end of the input, -1 on a read error (errno).
 */
static int ctl_read_line(struct ctl_reader *r, struct buf *text, size_t max, struct ctl_line *l)
{
	size_t got = 0;

	memset(l, 0, sizeof(*l));
	l->off = text->len;
	for (;;) {
		const char *at, *nl;
		size_t n;

		if (r->pos == r->end) {
			r->pos = 0;
			r->end = fread(r->data, 1, sizeof(r->data), r->in);
			if (r->end == 0 && (ferror(r->in) || got == 0))
				return ferror(r->in) ? -1 : 0;
			if (r->end == 0)
				break; /* the last line, without a '\n' */
		}
		at = r->data + r->pos;
		nl = memchr(at, '\n', r->end - r->pos);
		n = nl ? (size_t)(nl - at) + 1 : r->end - r->pos;
		r->pos += n;
		got += n;
		if (got > max + 2) { /* + "\r\n" */
			l->too_long = true;
			text->len = l->off;
			if (text->data)
				text->data[text->len] = '\0';
		} else if (buf_append(text, at, n)) {
			errno = ENOMEM;
			return -1;
		}
		if (nl)
			break;
	}
	l->len = text->len - l->off;
	return 1;
}

/* Reads the next batch into b (b->n is 0 at the end of the input).
 * Returns 0, or 1 after telling stderr about a read error. */
static int ctl_read_batch(struct ctl_import *im, struct ctl_batch *b)
{
	buf_reset(&b->text);
	b->n = 0;
	while (!im->eof && b->n < CTL_BATCH_LINES && b->text.len < CTL_BATCH_BYTES) {
		struct ctl_line *l = &b->lines[b->n];
		int rc = ctl_read_line(&im->reader, &b->text, im->c->cfg.max_message_bytes, l);

		if (rc < 0) {
			fprintf(stderr, "relayctl: reading %s: %s\n", im->name, strerror(errno));
			return 1;
		}
		if (rc == 0) {
			im->eof = true;
			break;
		}
		l->lineno = ++im->lineno;
		if (l->lineno == 1 && l->len >= 3 && memcmp(b->text.data + l->off, "\xEF\xBB\xBF", 3) == 0) {
			l->off += 3; /* a UTF-8 BOM */
			l->len -= 3;
		}
		b->n++;
	}
	return 0;
}

static void ctl_batch_clear(struct ctl_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (b->lines[i].verdict == CTL_GOOD || b->lines[i].verdict == CTL_REFUSED)
			event_free(&b->lines[i].ev);
	b->n = 0;
	buf_reset(&b->text);
}

/* The import request for b's good events, in im->req; their number in *n.
 * Returns 0 or ERR_NOMEM. */
static int ctl_build_request(struct ctl_import *im, const struct ctl_batch *b, uint32_t *n)
{
	struct buf *r = &im->req;
	int rc;

	buf_reset(r);
	*n = 0;
	rc = buf_append_str(r, "{\"" ADMIN_F_CMD "\":\"");
	rc = rc ? rc : buf_append_str(r, admin_cmd_name(ADMIN_CMD_IMPORT));
	rc = rc ? rc : buf_append_str(r, "\",\"" ADMIN_F_V "\":");
	rc = rc ? rc : buf_append_int(r, ADMIN_VERSION);
	rc = rc ? rc : buf_append_str(r, ",\"" ADMIN_F_VERIFIED "\":true,\"" ADMIN_F_EVENTS "\":[");
	for (size_t i = 0; i < b->n && rc == 0; i++) {
		const struct ctl_line *l = &b->lines[i];

		if (l->verdict != CTL_GOOD)
			continue;
		if ((*n && (rc = buf_append_byte(r, ','))) ||
		    (rc = buf_append(r, l->ev.json, l->ev.json_len)))
			break;
		im->sent[(*n)++] = (uint32_t)i;
	}
	return rc ? rc : buf_append_str(r, "]}");
}

/* Counts stored's answer for the n events sent from b, and marks the lines
 * it refused with its reasons. */
static void ctl_tally(struct ctl_import *im, struct ctl_batch *b, const cJSON *reply, uint32_t n)
{
	const cJSON *p;

	for (int k = CTL_N_STORED; k <= CTL_N_INVALID; k++)
		im->count[k] += (unsigned long)ctl_num(reply, ctl_count_names[k]);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_PROBLEMS)) {
		double i = ctl_num(p, ADMIN_F_INDEX);
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(p, ADMIN_F_MESSAGE);
		struct ctl_line *l;

		if (i < 0 || i >= n)
			continue;
		l = &b->lines[im->sent[(uint32_t)i]];
		l->verdict = CTL_REFUSED;
		snprintf(l->why, sizeof(l->why), "%s", cJSON_IsString(msg) ? msg->valuestring : "?");
	}
}

static void ctl_progress(const struct ctl_import *im, FILE *out, const char *end)
{
	const unsigned long *n = im->count;

	fprintf(out, "%s%lu lines: %lu stored, %lu duplicate, %lu superseded, %lu refused, %lu invalid,"
		" %lu blank; %lu with extra fields%s", out == stderr ? "\r" : "", im->lineno,
		n[CTL_N_STORED], n[CTL_N_DUPLICATE], n[CTL_N_SUPERSEDED], n[CTL_N_REFUSED],
		n[CTL_N_INVALID], n[CTL_N_BLANK], n[CTL_N_EXTRA], end);
}

/* Reports b's bad lines in line order and counts what stored did not. */
static void ctl_report(struct ctl_import *im, const struct ctl_batch *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct ctl_line *l = &b->lines[i];

		if (l->verdict == CTL_BLANK)
			im->count[CTL_N_BLANK]++;
		if (l->verdict == CTL_INVALID)
			im->count[CTL_N_INVALID]++;
		if (l->extra && (l->verdict == CTL_GOOD || l->verdict == CTL_REFUSED))
			im->count[CTL_N_EXTRA]++;
		if (l->verdict == CTL_INVALID || l->verdict == CTL_REFUSED)
			fprintf(stderr, "%sline %lu: %s\n", im->tty ? "\r\033[K" : "", l->lineno, l->why);
	}
}

/* Sends b's good events and reports b.  Returns 0, or 1 when stored
 * failed us (then b's events may or may not be stored). */
static int ctl_send_batch(struct ctl_import *im, struct ctl_batch *b)
{
	cJSON *reply = NULL;
	uint32_t n = 0;
	int status = 0;

	if (ctl_build_request(im, b, &n)) {
		fprintf(stderr, "relayctl: out of memory\n");
		status = 1;
	} else if (n) {
		status = ctl_call_text(im->c, im->req.data, im->req.len, &reply, NULL) ||
			 ctl_failed(reply);
	}
	if (status == 0 && n)
		ctl_tally(im, b, reply, n);
	cJSON_Delete(reply);
	if (status) {
		im->stopped_at = b->lines[0].lineno;
		fprintf(stderr, "relayctl: lines %lu to %lu may not be imported, and no later line was\n",
			b->lines[0].lineno, b->lines[b->n - 1].lineno);
		return 1;
	}
	ctl_report(im, b);
	if (im->tty)
		ctl_progress(im, stderr, "");
	return 0;
}

/* Judges and sends batch after batch, judging the next while stored
 * ingests one.  Returns relayctl's exit status. */
static int ctl_import_run(struct ctl_import *im)
{
	struct ctl_batch *cur = &im->batch[0], *next = &im->batch[1], *t;
	uint32_t max = im->c->cfg.max_message_bytes;
	int status = ctl_read_batch(im, cur);

	if (status == 0 && cur->n) {
		ctl_judges_start(im->judges, cur->text.data, cur->lines, cur->n, max);
		ctl_judges_wait(im->judges);
	}
	while (status == 0 && cur->n) {
		int unread = ctl_read_batch(im, next);
		bool judging = !unread && next->n;

		if (judging)
			ctl_judges_start(im->judges, next->text.data, next->lines, next->n, max);
		status = ctl_send_batch(im, cur) || unread;
		if (judging)
			ctl_judges_wait(im->judges);
		ctl_batch_clear(cur);
		t = cur;
		cur = next;
		next = t;
	}
	ctl_batch_clear(cur);
	return status;
}

static void ctl_summary(const struct ctl_import *im, int status)
{
	char end[96];

	if (!im->c->json) {
		snprintf(end, sizeof(end), status ? " (stopped early at line %lu)\n" : "\n",
			 im->stopped_at ? im->stopped_at : im->lineno);
		ctl_progress(im, stdout, end);
		return;
	}
	printf("{\"lines\":%lu", im->lineno);
	for (int k = 0; k < CTL_NCOUNTS; k++)
		printf(",\"%s\":%lu", ctl_count_names[k], im->count[k]);
	printf(",\"complete\":%s}\n", status ? "false" : "true");
}

static int ctl_import_init(struct ctl_import *im)
{
	im->judges = ctl_judges_new(ctl_cores());
	im->sent = calloc(CTL_BATCH_LINES, sizeof(*im->sent));
	for (int i = 0; i < 2; i++)
		im->batch[i].lines = calloc(CTL_BATCH_LINES, sizeof(*im->batch[i].lines));
	if (!im->judges || !im->sent || !im->batch[0].lines || !im->batch[1].lines) {
		fprintf(stderr, "relayctl: out of memory\n");
		return 1;
	}
	return 0;
}

int ctl_import(struct ctl *c)
{
	struct ctl_import *im = calloc(1, sizeof(*im));
	int status;

	if (!im)
		return 1;
	im->c = c;
	im->tty = isatty(STDERR_FILENO);
	im->name = c->nargs ? c->args[0] : "stdin";
	im->reader.in = c->nargs ? fopen(c->args[0], "r") : stdin;
	if (!im->reader.in) {
		fprintf(stderr, "relayctl: cannot read %s: %s\n", c->args[0], strerror(errno));
		free(im);
		return 1;
	}
	status = ctl_import_init(im) ? 1 : ctl_import_run(im);
	if (im->tty)
		fprintf(stderr, "\n");
	ctl_summary(im, status);
	if (im->reader.in != stdin)
		fclose(im->reader.in);
	for (int i = 0; i < 2; i++) {
		free(im->batch[i].lines);
		buf_free(&im->batch[i].text);
	}
	buf_free(&im->req);
	free(im->sent);
	ctl_judges_free(im->judges);
	free(im);
	return status;
}

int ctl_store_events(struct ctl *c, cJSON *events, const char *source, struct ctl_tally *t)
{
	cJSON *req = cJSON_CreateObject(), *reply = NULL;
	int status;

	cJSON_AddStringToObject(req, ADMIN_F_CMD, "import");
	cJSON_AddStringToObject(req, ADMIN_F_SOURCE, source);
	cJSON_AddItemReferenceToObject(req, ADMIN_F_EVENTS, events);
	status = ctl_call(c, req, &reply, NULL) || ctl_failed(reply);
	if (status == 0) {
		t->stored += (size_t)ctl_num(reply, ADMIN_F_STORED);
		t->duplicate += (size_t)(ctl_num(reply, ADMIN_F_DUPLICATE) +
					 ctl_num(reply, ADMIN_F_SUPERSEDED));
		t->refused += (size_t)(ctl_num(reply, ADMIN_F_REFUSED) +
				       ctl_num(reply, ADMIN_F_INVALID));
	}
	cJSON_Delete(req);
	cJSON_Delete(reply);
	return status;
}
