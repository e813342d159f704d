/*
 * ctl_data.c - relayctl export and import: event transfers that take many
 * requests (see ctl.h).
 *
 * export pages through stored's events after a seq cursor and writes each
 * as one line of compact JSON to stdout (JSONL), so memory stays bounded
 * whatever the size of the database.
 *
 * import reads JSONL from stdin, checks every line itself (JSON, NIP-01
 * structure and id, BIP-340 signature), reports bad lines by number without
 * stopping, and sends the good ones in batches (at most 500 events and
 * about 1 MiB) for stored to check again and ingest under its usual rules.
 * On a terminal, stderr shows a progress line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/buf.h"
#include "../../common/event.h"
#include "../../common/event_sig.h"
#include "../../common/json.h"
#include "ctl.h"

#define CTL_PAGE_ROWS 1000
#define CTL_BATCH_EVENTS 500
#define CTL_BATCH_BYTES (1u << 20)

/* ---- export ---- */

/* Writes a page's events; returns how many. */
static size_t ctl_export_page(const cJSON *reply)
{
	const cJSON *ev;
	size_t n = 0;

	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_EVENTS)) {
		char *line = json_print(ev, false);

		if (line) {
			fputs(line, stdout);
			fputc('\n', stdout);
			free(line);
			n++;
		}
	}
	return n;
}

int ctl_export(struct ctl *c)
{
	cJSON *filter = c->nargs ? json_parse(c->args[0], strlen(c->args[0]), false) : NULL;
	cJSON *reply = NULL;
	double last = 0;
	size_t total = 0;
	int more = 1, status = 0, tty = isatty(STDERR_FILENO);

	if (c->nargs && !filter) {
		fprintf(stderr, "relayctl: the filter is not valid JSON: %s\n", c->args[0]);
		return 2;
	}
	while (more && status == 0) {
		cJSON *req = cJSON_CreateObject();

		if (filter)
			cJSON_AddItemReferenceToObject(req, ADMIN_F_FILTER, filter);
		cJSON_AddNumberToObject(req, ADMIN_F_AFTER, last);
		cJSON_AddNumberToObject(req, ADMIN_F_LIMIT, CTL_PAGE_ROWS);
		status = ctl_call(c, req, &reply, NULL) || ctl_failed(reply);
		cJSON_Delete(req);
		if (status == 0) {
			total += ctl_export_page(reply);
			last = ctl_num(reply, ADMIN_F_LAST);
			more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_MORE));
			if (tty)
				fprintf(stderr, "\rexported %zu events", total);
		}
		cJSON_Delete(reply);
		reply = NULL;
	}
	if (tty)
		fprintf(stderr, "\n");
	cJSON_Delete(filter);
	if (fflush(stdout) != 0) {
		perror("relayctl: stdout");
		return 1;
	}
	return status;
}

/* ---- import ---- */

struct ctl_import {
	struct ctl *c;
	struct sig_verifier *verifier;
	struct buf batch;      /* `{"events":[` e1,e2,... (ctl_call adds cmd, v) */
	unsigned long *lines;  /* the line number of each event in the batch */
	unsigned n;            /* events in the batch */
	unsigned long lineno;  /* lines read */
	unsigned long stored, duplicate, refused, invalid;
	int tty;
};

static void ctl_import_progress(const struct ctl_import *im, FILE *out, const char *end)
{
	fprintf(out, "%s%lu lines: %lu stored, %lu duplicate, %lu refused, %lu invalid%s",
		out == stderr ? "\r" : "", im->lineno, im->stored, im->duplicate, im->refused,
		im->invalid, end);
}

/* Counts a batch's reply and reports its problems by line number. */
static void ctl_import_tally(struct ctl_import *im, const cJSON *reply)
{
	const cJSON *p;

	im->stored += (unsigned long)ctl_num(reply, ADMIN_F_STORED);
	im->duplicate += (unsigned long)ctl_num(reply, ADMIN_F_DUPLICATE);
	im->refused += (unsigned long)ctl_num(reply, ADMIN_F_REFUSED);
	im->invalid += (unsigned long)ctl_num(reply, ADMIN_F_INVALID);
	cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(reply, ADMIN_F_PROBLEMS)) {
		unsigned i = (unsigned)ctl_num(p, ADMIN_F_INDEX);
		const cJSON *msg = cJSON_GetObjectItemCaseSensitive(p, ADMIN_F_MESSAGE);

		fprintf(stderr, "%sline %lu: %s\n", im->tty ? "\r\033[K" : "",
			i < im->n ? im->lines[i] : 0, cJSON_IsString(msg) ? msg->valuestring : "?");
	}
}

/* Sends the batch, if any.  Returns 0 or 1 (stored failed us). */
static int ctl_import_flush(struct ctl_import *im)
{
	cJSON *req, *reply = NULL;
	int status;

	if (im->n == 0)
		return 0;
	if (buf_append_str(&im->batch, "]}"))
		return 1;
	req = json_parse(im->batch.data, im->batch.len, false);
	status = !req || ctl_call(im->c, req, &reply, NULL) || ctl_failed(reply);
	if (status == 0)
		ctl_import_tally(im, reply);
	cJSON_Delete(req);
	cJSON_Delete(reply);
	buf_reset(&im->batch);
	im->n = 0;
	if (im->tty)
		ctl_import_progress(im, stderr, "");
	return status;
}

/* Checks one line as relayd checks an EVENT; 0, or 1 with why set. */
static int ctl_import_check(struct ctl_import *im, const char *line, size_t len, char *why,
			    size_t why_len)
{
	cJSON *obj;
	struct event ev;
	int bad = 0;

	if (len > im->c->cfg.max_message_bytes) {
		snprintf(why, why_len, "invalid: longer than max_message_bytes (%u)",
			 im->c->cfg.max_message_bytes);
		return 1;
	}
	obj = json_parse(line, len, false);
	if (!cJSON_IsObject(obj)) {
		snprintf(why, why_len, "invalid: not a JSON object");
		bad = 1;
	} else if (event_parse(obj, NULL, &ev, why, why_len)) {
		bad = 1;
	} else {
		if (sig_verify_event(im->verifier, &ev)) {
			snprintf(why, why_len, "invalid: bad signature");
			bad = 1;
		}
		event_free(&ev);
	}
	cJSON_Delete(obj);
	return bad;
}

/* Adds a checked line to the batch, sending the batch first if it is full. */
static int ctl_import_add(struct ctl_import *im, const char *line, size_t len)
{
	if (im->n && (im->n == CTL_BATCH_EVENTS || im->batch.len + len + 3 > CTL_BATCH_BYTES) &&
	    ctl_import_flush(im))
		return 1;
	if ((im->n == 0 && buf_append_str(&im->batch, "{\"" ADMIN_F_EVENTS "\":[")) ||
	    (im->n && buf_append_byte(&im->batch, ',')) || buf_append(&im->batch, line, len))
		return 1;
	im->lines[im->n++] = im->lineno;
	return 0;
}

static int ctl_import_line(struct ctl_import *im, char *line, size_t len)
{
	char why[256];

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r' || line[len - 1] == ' ' ||
		       line[len - 1] == '\t'))
		len--;
	if (len == 0)
		return 0;
	if (ctl_import_check(im, line, len, why, sizeof(why))) {
		im->invalid++;
		fprintf(stderr, "%sline %lu: %s\n", im->tty ? "\r\033[K" : "", im->lineno, why);
		return 0;
	}
	return ctl_import_add(im, line, len);
}

int ctl_import(struct ctl *c)
{
	struct ctl_import im = { .c = c, .batch = BUF_INIT, .tty = isatty(STDERR_FILENO) };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int status = 0;

	im.verifier = sig_verifier_new();
	im.lines = calloc(CTL_BATCH_EVENTS, sizeof(*im.lines));
	if (!im.verifier || !im.lines)
		status = 1;
	while (status == 0 && (len = getline(&line, &cap, stdin)) >= 0) {
		im.lineno++;
		status = ctl_import_line(&im, line, (size_t)len);
	}
	if (status == 0)
		status = ctl_import_flush(&im);
	if (im.tty)
		fprintf(stderr, "\n");
	if (c->json)
		printf("{\"lines\":%lu,\"stored\":%lu,\"duplicate\":%lu,\"refused\":%lu,"
		       "\"invalid\":%lu,\"complete\":%s}\n", im.lineno, im.stored, im.duplicate,
		       im.refused, im.invalid, status ? "false" : "true");
	else
		ctl_import_progress(&im, stdout, status ? " (stopped early)\n" : "\n");
	free(line);
	free(im.lines);
	buf_free(&im.batch);
	sig_verifier_free(im.verifier);
	return status;
}
