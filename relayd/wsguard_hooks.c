/*
 * wsguard_hooks.c - recv() and close() for the relayd executable, so that
 * libwebsockets' reads of client connections pass through wsguard.h.
 *
 * A shared library's calls bind to the executable's definition of a symbol
 * before the C library's, so these replace recv() and close() for the whole
 * process: every descriptor the guard does not follow is read and closed
 * exactly as before, by the same system calls.  Linked into relayd alone
 * (not into the unit tests, which drive wsguard_scan() directly).
 */
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wsguard.h"

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	long n = syscall(SYS_recvfrom, fd, buf, len, flags, NULL, NULL);

	if (n > 0 && !(flags & MSG_PEEK))
		n = (long)wsguard_filter(fd, buf, (size_t)n);
	return (ssize_t)n;
}

/* Forgets the stream before the descriptor can be reused. */
int close(int fd)
{
	wsguard_forget(fd);
	return (int)syscall(SYS_close, fd);
}
