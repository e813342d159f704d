/*
 * rundir.h - run_dir and the modes of the nng IPC sockets in it.
 *
 * Every socket in run_dir gets a fixed mode whatever the umask: 0600, or
 * 0660 and the group socket_group names, so that workers running as
 * another user of that group can dial stored and be dialled back.  The
 * admin socket is always 0600.  run_dir itself must keep everyone else
 * out: its group may reach it only when it is socket_group, and others
 * never.  The socket's group is set just after it listens, so run_dir is
 * what keeps other users out meanwhile.
 *
 * Why: stored-pub.ipc carries every event, private kinds and DMs included,
 * and stored-rpc.ipc takes requests as from a worker.
 */
#ifndef COMMON_RUNDIR_H
#define COMMON_RUNDIR_H

#include <nng/nng.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

/* Who may dial a socket. */
enum rundir_peers {
	RUNDIR_OWNER,   /* only this process's user (and root): 0600 */
	RUNDIR_WORKERS, /* stored and the workers: 0600, or 0660 with socket_group */
};

/*
 * Creates dir and its missing parents.  Parents get mkdir()'s 0755 under
 * the umask; dir itself gets mode under the umask.  Returns 0 (also when
 * dir existed), or ERR_IO with errno set.  *created (may be NULL) says
 * whether this call made dir.
 */
int rundir_mkdirs(const char *dir, mode_t mode, bool *created);

/*
 * Readies cfg's run_dir for the sockets.  With create, a missing run_dir
 * is made with exactly 0700, or 0770 and socket_group's group.  Then it
 * checks that run_dir is a directory that neither others nor a group
 * other than socket_group can read, write or search.  Returns 0, or
 * ERR_CONFIG (socket_group names no group, run_dir is too open) or
 * ERR_IO (run_dir cannot be made or read), with a one-line reason in err.
 */
int rundir_prepare(const struct config *cfg, bool create, char *err, size_t err_len);

/*
 * Listens on sock at url (ipc://path in run_dir), removing a file left at
 * path first, and gives the socket file the mode and group peers call for
 * under cfg.  *listener (may be NULL) is the new listener.  Returns 0 or
 * ERR_NNG (logged); on failure no listener is left.  Safe on any thread.
 */
int rundir_listen(nng_socket sock, const char *url, enum rundir_peers peers,
		  const struct config *cfg, nng_listener *listener);

#endif
