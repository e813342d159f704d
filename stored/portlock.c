/* portlock.c - the per-port lock (see portlock.h). */
#include "portlock.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int portlock_take(uint16_t port)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int n, fd, saved;

	/* Abstract namespace: sun_path starts with a NUL byte. */
	n = snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "crelay-port-%u", (unsigned)port);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n))) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}
