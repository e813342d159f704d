/*
 * ctl_backup.c - relayctl backup [PATH] (see ctl.h).
 *
 * With a path, asks stored for a copy of relay.db there (stored/backup.h;
 * a relative path is taken from relayctl's own directory, since stored's
 * is another) and then asks how it stands every 200 ms until it ends:
 * a copy can take longer than one request may wait.  On a terminal, stderr
 * shows the progress.  Exit status 0 once the copy is complete, 1 if it
 * could not be made.  Without a path, prints how the running or last
 * backup stands.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl.h"

#define CTL_BACKUP_POLL_US 200000

static const char *ctl_str(const cJSON *obj, const char *name)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));

	return s ? s : "";
}

static void ctl_show_backup(const cJSON *reply)
{
	const char *state = ctl_str(reply, "state");

	if (strcmp(state, "none") == 0) {
		printf("no backup since stored started\n");
		return;
	}
	printf("backup to %s: %s, %.0f of %.0f pages, %.0f events (newest seq %.0f)", ctl_str(reply, "path"),
	       state, ctl_num(reply, "pages_done"), ctl_num(reply, "pages_total"),
	       ctl_num(reply, "events"), ctl_num(reply, "max_seq"));
	if (strcmp(state, "done") == 0)
		printf(", %.0f bytes", ctl_num(reply, "bytes"));
	printf(", %.1f s", ctl_num(reply, "seconds"));
	if (strcmp(state, "failed") == 0)
		printf(": %s", ctl_str(reply, "failure"));
	printf("\n");
}

/* One request; 0 with *reply, or relayctl's exit status. */
static int ctl_backup_ask(struct ctl *c, const char *path, cJSON **reply, char **text)
{
	cJSON *req = cJSON_CreateObject();
	int status;

	if (path)
		cJSON_AddStringToObject(req, "path", path);
	status = ctl_call(c, req, reply, text);
	cJSON_Delete(req);
	if (status == 0 && ctl_failed(*reply)) {
		cJSON_Delete(*reply);
		free(*text);
		return 1;
	}
	return status;
}

static void ctl_backup_progress(const cJSON *reply)
{
	double total = ctl_num(reply, "pages_total");

	fprintf(stderr, "\rbackup: %3.0f%% of %.0f pages, %.0f s", total > 0 ?
		100 * ctl_num(reply, "pages_done") / total : 0, total, ctl_num(reply, "seconds"));
}

int ctl_backup(struct ctl *c)
{
	char path[PATH_MAX], *text = NULL;
	int tty = isatty(STDERR_FILENO), status;
	cJSON *reply = NULL;

	if (c->nargs && c->args[0][0] != '/') {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(path, sizeof(path), "%s/%s", cwd, c->args[0]) >= (int)sizeof(path)) {
			fprintf(stderr, "relayctl: the backup's path is too long\n");
			return 2;
		}
	} else if (c->nargs) {
		snprintf(path, sizeof(path), "%s", c->args[0]);
	}
	status = ctl_backup_ask(c, c->nargs ? path : NULL, &reply, &text);
	while (status == 0 && c->nargs && strcmp(ctl_str(reply, "state"), "running") == 0) {
		if (tty && !c->json)
			ctl_backup_progress(reply);
		cJSON_Delete(reply);
		free(text);
		usleep(CTL_BACKUP_POLL_US);
		status = ctl_backup_ask(c, NULL, &reply, &text);
	}
	if (tty && !c->json && c->nargs)
		fprintf(stderr, "\r\033[K");
	if (status)
		return status;
	if (c->json)
		printf("%s\n", text);
	else
		ctl_show_backup(reply);
	/* Another backup could have been asked for meanwhile: ours is the
	 * one at our path. */
	if (c->nargs && (strcmp(ctl_str(reply, "path"), path) != 0 ||
			 strcmp(ctl_str(reply, "state"), "done") != 0))
		status = 1;
	cJSON_Delete(reply);
	free(text);
	return status;
}
