/* plugin_proc.c - the plugin's process (see plugin_proc.h). */
#include "plugin_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../common/err.h"

extern char **environ;

/* How long a plugin asked to end may take before it is killed. */
#define PLUGIN_PROC_GRACE_MS 200

void plugin_proc_init(struct plugin_proc *pp)
{
	*pp = (struct plugin_proc){ 0, -1, -1 };
}

static void plugin_proc_close_pair(int fds[2])
{
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
}

/* stored blocks its signals for sigwait() and ignores SIGPIPE; the plugin
 * gets an empty mask and default handlers, as if started from a shell. */
static int plugin_proc_attr(posix_spawnattr_t *attr)
{
	sigset_t none, dflt;

	sigemptyset(&none);
	sigemptyset(&dflt);
	sigaddset(&dflt, SIGPIPE);
	sigaddset(&dflt, SIGHUP);
	sigaddset(&dflt, SIGINT);
	sigaddset(&dflt, SIGTERM);
	if (posix_spawnattr_init(attr))
		return ERR_IO;
	if (posix_spawnattr_setsigmask(attr, &none) || posix_spawnattr_setsigdefault(attr, &dflt) ||
	    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) {
		posix_spawnattr_destroy(attr);
		return ERR_IO;
	}
	return 0;
}

static int plugin_proc_spawn(pid_t *pid, const char *path, int in, int out)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char *argv[] = { (char *)path, NULL };
	int rc;

	if (plugin_proc_attr(&attr))
		return ERR_IO;
	if (posix_spawn_file_actions_init(&fa)) {
		posix_spawnattr_destroy(&attr);
		return ERR_IO;
	}
	/* dup2 clears FD_CLOEXEC on the copies; every other pipe end stays
	 * close-on-exec. */
	rc = posix_spawn_file_actions_adddup2(&fa, in, 0) ||
	     posix_spawn_file_actions_adddup2(&fa, out, 1);
	if (!rc) {
		rc = posix_spawn(pid, path, &fa, &attr, argv, environ);
		errno = rc;
	}
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return rc ? ERR_IO : 0;
}

int plugin_proc_start(struct plugin_proc *pp, const char *path)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, saved;
	pid_t pid;

	if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) ||
	    plugin_proc_spawn(&pid, path, in[0], out[1])) {
		saved = errno;
		plugin_proc_close_pair(in);
		plugin_proc_close_pair(out);
		errno = saved;
		return ERR_IO;
	}
	close(in[0]);
	close(out[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	*pp = (struct plugin_proc){ pid, in[1], out[0] };
	return 0;
}

/* Reaps pid if it has ended within ms milliseconds; returns its status
 * or -1. */
static int plugin_proc_reap_within(pid_t pid, int ms)
{
	struct timespec tick = { 0, 10 * 1000000 };
	int status;

	for (int waited = 0;; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		if (waited >= ms)
			return -1;
		nanosleep(&tick, NULL);
	}
}

int plugin_proc_stop(struct plugin_proc *pp)
{
	int status = -1;

	if (pp->in_fd >= 0)
		close(pp->in_fd);
	if (pp->out_fd >= 0)
		close(pp->out_fd);
	if (pp->pid > 0) {
		kill(pp->pid, SIGTERM);
		status = plugin_proc_reap_within(pp->pid, PLUGIN_PROC_GRACE_MS);
		if (status < 0) {
			kill(pp->pid, SIGKILL);
			while (waitpid(pp->pid, &status, 0) < 0 && errno == EINTR)
				;
		}
	}
	plugin_proc_init(pp);
	return status;
}

int plugin_file_stat(const char *path, struct plugin_file *f)
{
	struct stat st;

	if (stat(path, &st))
		return ERR_IO;
	*f = (struct plugin_file){ (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
				   (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec };
	return 0;
}

bool plugin_file_same(const struct plugin_file *a, const struct plugin_file *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns;
}
