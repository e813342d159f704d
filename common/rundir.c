/* rundir.c - run_dir and its sockets' modes (see rundir.h). */
#include "rundir.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "log.h"

/* getgrnam_r()'s first buffer; a group with many members needs more. */
#define RUNDIR_GROUP_BUF 4096
#define RUNDIR_GROUP_BUF_MAX (1 << 20)

/* The group that may reach the sockets, if socket_group names one. */
struct rundir_group {
	bool set;
	gid_t gid;
};

/* Looks name up into *gid.  Returns 0, ERR_NOTFOUND, ERR_NOMEM, or ERR_IO
 * with errno set. */
static int rundir_group_id(const char *name, gid_t *gid)
{
	struct group entry, *found = NULL;
	size_t len = RUNDIR_GROUP_BUF;
	char *buf = NULL;
	int rv;

	do {
		char *bigger = realloc(buf, len);

		if (!bigger) {
			free(buf);
			return ERR_NOMEM;
		}
		buf = bigger;
		rv = getgrnam_r(name, &entry, buf, len, &found);
		len *= 2;
	} while (rv == ERANGE && len <= RUNDIR_GROUP_BUF_MAX);
	if (found)
		*gid = found->gr_gid;
	free(buf);
	errno = rv;
	if (found)
		return 0;
	return rv == 0 || rv == ENOENT || rv == ESRCH ? ERR_NOTFOUND : ERR_IO;
}

/* Resolves cfg's socket_group into *g.  Returns 0, or ERR_CONFIG with the
 * reason in err when it names no group. */
static int rundir_group(const struct config *cfg, struct rundir_group *g, char *err,
			size_t err_len)
{
	int rv;

	g->set = cfg->socket_group[0] != '\0';
	g->gid = (gid_t)-1;
	if (!g->set)
		return 0;
	rv = rundir_group_id(cfg->socket_group, &g->gid);
	if (rv == ERR_NOTFOUND)
		snprintf(err, err_len, "socket_group '%s' is not a group on this machine",
			 cfg->socket_group);
	else if (rv)
		snprintf(err, err_len, "socket_group '%s': cannot look it up: %s", cfg->socket_group,
			 rv == ERR_IO ? strerror(errno) : "out of memory");
	return rv ? ERR_CONFIG : 0;
}

int rundir_mkdirs(const char *dir, mode_t mode, bool *created)
{
	char tmp[CONFIG_PATH_MAX];

	if (created)
		*created = false;
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/' || p[1] == '\0') /* a trailing '/' ends dir itself */
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return ERR_IO;
		*p = '/';
	}
	if (mkdir(tmp, mode) == 0) {
		if (created)
			*created = true;
		return 0;
	}
	return errno == EEXIST ? 0 : ERR_IO;
}

/* Makes run_dir if missing, with exactly the mode the group calls for:
 * mkdir() alone would take the umask's bits away. */
static int rundir_create(const char *dir, const struct rundir_group *g, char *err,
			 size_t err_len)
{
	mode_t mode = g->set ? 0770 : 0700;
	bool created;

	if (rundir_mkdirs(dir, 0700, &created) ||
	    (created && g->set && chown(dir, (uid_t)-1, g->gid)) ||
	    (created && chmod(dir, mode))) {
		snprintf(err, err_len, "cannot create run_dir %s: %s", dir, strerror(errno));
		return ERR_IO;
	}
	return 0;
}

/* Whether st leaves run_dir to its owner, and to socket_group's members. */
static bool rundir_closed(const struct stat *st, const struct rundir_group *g)
{
	if (st->st_mode & S_IRWXO)
		return false;
	return !(st->st_mode & S_IRWXG) || (g->set && st->st_gid == g->gid);
}

static int rundir_check(const char *dir, const struct rundir_group *g, char *err,
			size_t err_len)
{
	struct stat st;

	if (stat(dir, &st)) {
		snprintf(err, err_len, "run_dir %s: %s", dir, strerror(errno));
		return ERR_IO;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "run_dir %s is not a directory", dir);
		return ERR_CONFIG;
	}
	if (!rundir_closed(&st, g)) {
		snprintf(err, err_len,
			 "run_dir %s is mode %04o, open to %s; not starting until only %s can"
			 " reach it (chmod %s)",
			 dir, (unsigned)(st.st_mode & 07777),
			 st.st_mode & S_IRWXO ? "other users" : "its group",
			 g->set ? "its owner and socket_group" : "its owner",
			 g->set ? "0770, group socket_group" : "0700");
		return ERR_CONFIG;
	}
	return 0;
}

int rundir_prepare(const struct config *cfg, bool create, char *err, size_t err_len)
{
	struct rundir_group g;
	int rv = rundir_group(cfg, &g, err, err_len);

	if (!rv && create)
		rv = rundir_create(cfg->run_dir, &g, err, err_len);
	return rv ? rv : rundir_check(cfg->run_dir, &g, err, err_len);
}

/* Gives the listening socket file at path its group.  Returns 0, or
 * ERR_IO (logged): the caller then closes the listener. */
static int rundir_chgrp(const char *path, const struct rundir_group *g)
{
	if (chown(path, (uid_t)-1, g->gid) == 0)
		return 0;
	log_warn("chgrp socket_group %s", path);
	return ERR_IO;
}

int rundir_listen(nng_socket sock, const char *url, enum rundir_peers peers,
		  const struct config *cfg, nng_listener *listener)
{
	const char *path = url + strlen("ipc://");
	struct rundir_group g = { false, (gid_t)-1 };
	char err[160];
	nng_listener l = NNG_LISTENER_INITIALIZER;
	int rv;

	if (peers == RUNDIR_WORKERS && rundir_group(cfg, &g, err, sizeof(err))) {
		log_warnx("%s", err);
		return ERR_NNG;
	}
	unlink(path);
	rv = nng_listener_create(&l, sock, url);
	if (rv == 0)
		rv = nng_listener_set_int(l, NNG_OPT_IPC_PERMISSIONS, g.set ? 0660 : 0600);
	if (rv == 0)
		rv = nng_listener_start(l, 0);
	if (rv == 0 && g.set && rundir_chgrp(path, &g))
		rv = NNG_EPERM;
	if (rv) {
		log_warnx("listen %s: %s", url, nng_strerror(rv));
		nng_listener_close(l);
		return ERR_NNG;
	}
	if (listener)
		*listener = l;
	return 0;
}
