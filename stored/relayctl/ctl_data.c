/*
 * ctl_data.c - relayctl export: an event transfer that takes many requests
 * (see ctl.h; import is ctl_import.c's).
 *
 * export pages through stored's events after a seq cursor and writes each
 * as one line of compact JSON to stdout (JSONL), so memory stays bounded
 * whatever the size of the database.  It writes every match: a filter's
 * "limit" is ignored, and stderr says so.  On a terminal, stderr shows a
 * progress line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/json.h"
#include "ctl.h"

#define CTL_PAGE_ROWS 1000

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

/* Whether filter (an object or an array of them) has a "limit". */
static bool ctl_has_limit(const cJSON *filter)
{
	const cJSON *f;

	if (cJSON_IsObject(filter))
		return cJSON_HasObjectItem(filter, ADMIN_F_LIMIT);
	cJSON_ArrayForEach(f, filter)
		if (cJSON_IsObject(f) && cJSON_HasObjectItem(f, ADMIN_F_LIMIT))
			return true;
	return false;
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
	if (ctl_has_limit(filter))
		fprintf(stderr, "relayctl: export ignores the filter's \"limit\" and writes every match\n");
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
