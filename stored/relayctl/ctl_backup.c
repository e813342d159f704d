/*
 * ctl_backup.c - relayctl backup [PATH] (see ctl.h).
 *
 * With a path, asks stored for a copy of relay.db there (stored/backup.h;
 * a relative path is taken from relayctl's own directory, since stored's
 * is another) and then asks how it stands every 200 ms until it ends:
 * a copy can take longer than one request may wait.  On a terminal, stderr
 * shows the progress.  Exit status 0 once the copy is complete and this
 * shell sees it at the path (stored under systemd has a /tmp of its own),
 * 1 if not.  Without a path, prints how the running or last backup
 * stands.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctl.h"

#define CTL_BACKUP_POLL_US 200000

/* A string field of obj, or "" (never NULL). */
static const char *ctl_str(const cJSON *obj, const char *name)
{
	const char *s = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(obj, name));

	return s ? s : "";
}

static void ctl_show_backup(const cJSON *reply)
{
	const char *state = ctl_str(reply, ADMIN_F_STATE);

	if (strcmp(state, ADMIN_BACKUP_NONE) == 0) {
		printf("no backup since stored started\n");
		return;
	}
	/* fputs, not %s: GCC's sanitizer builds see a NULL in ctl_str. */
	fputs("backup to ", stdout);
	fputs(ctl_str(reply, ADMIN_F_PATH), stdout);
	fputs(": ", stdout);
	fputs(state, stdout);
	printf(", %.0f of %.0f pages, %.0f events (newest seq %.0f)",
	       ctl_num(reply, ADMIN_F_PAGES_DONE), ctl_num(reply, ADMIN_F_PAGES_TOTAL),
	       ctl_num(reply, ADMIN_F_EVENTS), ctl_num(reply, ADMIN_F_MAX_SEQ));
	if (strcmp(state, ADMIN_BACKUP_DONE) == 0)
		printf(", %.0f bytes", ctl_num(reply, ADMIN_F_BYTES));
	printf(", %.1f s", ctl_num(reply, ADMIN_F_SECONDS));
	printf("\n");
	if (strcmp(state, ADMIN_BACKUP_FAILED) == 0)
		fprintf(stderr, "relayctl: the backup failed: %s\n",
			ctl_str(reply, ADMIN_F_FAILURE));
}

/* Whether the copy stored reports as done is the file this shell sees at
 * path; says why not. */
static int ctl_backup_visible(const cJSON *reply, const char *path)
{
	struct stat st;

	if (strcmp(ctl_str(reply, ADMIN_F_PATH), path) != 0) {
		/* Another backup began: ours ended, and only a complete copy
		 * has the name. */
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
		fprintf(stderr, "relayctl: another backup began; %s was not made\n", path);
		return 1;
	}
	if (strcmp(ctl_str(reply, ADMIN_F_STATE), ADMIN_BACKUP_DONE) != 0)
		return 1;
	if (lstat(path, &st) || !S_ISREG(st.st_mode) ||
	    (double)st.st_size != ctl_num(reply, ADMIN_F_BYTES)) {
		fprintf(stderr, "relayctl: stored wrote %s, but this shell does not see that file"
			" (stored's private /tmp under systemd?); back up into its state directory\n",
			path);
		return 1;
	}
	return 0;
}

/* One request; 0 with *reply, or relayctl's exit status. */
static int ctl_backup_ask(struct ctl *c, const char *path, cJSON **reply, char **text)
{
	cJSON *req = cJSON_CreateObject();
	int status;

	if (path)
		cJSON_AddStringToObject(req, ADMIN_F_PATH, path);
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
	double total = ctl_num(reply, ADMIN_F_PAGES_TOTAL);

	fprintf(stderr, "\rbackup: %3.0f%% of %.0f pages, %.0f s", total > 0 ?
		100 * ctl_num(reply, ADMIN_F_PAGES_DONE) / total : 0, total,
		ctl_num(reply, ADMIN_F_SECONDS));
}

int ctl_backup(struct ctl *c)
{
	char path[PATH_MAX], *text = NULL;
	int tty = isatty(STDERR_FILENO), status;
	cJSON *reply = NULL;

	if (c->nargs && c->args[0][0] != '/') {
		char cwd[PATH_MAX];

		if (!getcwd(cwd, sizeof(cwd))) {
			perror("relayctl: getcwd");
			return 1;
		}
		if (snprintf(path, sizeof(path), "%s/%s", cwd, c->args[0]) >= (int)sizeof(path)) {
			fprintf(stderr, "relayctl: the backup's path is too long\n");
			return 2;
		}
	} else if (c->nargs) {
		snprintf(path, sizeof(path), "%s", c->args[0]);
	}
	status = ctl_backup_ask(c, c->nargs ? path : NULL, &reply, &text);
	while (status == 0 && c->nargs &&
	       strcmp(ctl_str(reply, ADMIN_F_STATE), ADMIN_BACKUP_RUNNING) == 0 &&
	       strcmp(ctl_str(reply, ADMIN_F_PATH), path) == 0) {
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
	if (c->nargs)
		status = ctl_backup_visible(reply, path);
	cJSON_Delete(reply);
	free(text);
	return status;
}
