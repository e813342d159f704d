/*
 * plugin_proc.h - the write-policy plugin's process: starting it with its
 * stdin and stdout on pipes, stopping it, and noticing its file change.
 *
 * Called by the plugin thread alone (plugin.h).  The process inherits
 * stored's stderr, so what it logs lands in stored's log.
 */
#ifndef STORED_PLUGIN_PROC_H
#define STORED_PLUGIN_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct plugin_proc {
	pid_t pid;  /* 0: not running */
	int in_fd;  /* its stdin, non-blocking; -1 when not running */
	int out_fd; /* its stdout, non-blocking; -1 when not running */
};

/* What identifies a version of the program's file. */
struct plugin_file {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
};

/* A plugin_proc that runs nothing. */
void plugin_proc_init(struct plugin_proc *pp);

/* Starts the executable at path with no arguments, stored's environment
 * and default signal handling.  Returns 0 (pp filled) or ERR_IO (errno
 * set: it could not be executed). */
int plugin_proc_start(struct plugin_proc *pp, const char *path);

/* Closes its pipes, asks it to end (SIGTERM), and after a short bounded
 * wait kills it (SIGKILL); reaps it either way.  Returns its wait status,
 * or -1 when it was not running.  pp then runs nothing. */
int plugin_proc_stop(struct plugin_proc *pp);

/* Fills *f for the file at path; returns 0 or ERR_IO. */
int plugin_file_stat(const char *path, struct plugin_file *f);
bool plugin_file_same(const struct plugin_file *a, const struct plugin_file *b);

#endif
