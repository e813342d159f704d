/* notify.c - sd_notify without libsystemd (see notify.h). */
#include "notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "err.h"

int notify_send(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sun;
	socklen_t len;
	ssize_t sent;
	int fd;

	if (!path || !*path)
		return 0;
	if ((path[0] != '/' && path[0] != '@') || strlen(path) >= sizeof(sun.sun_path))
		return ERR_IO;
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, strlen(path));
	if (path[0] == '@')
		sun.sun_path[0] = '\0'; /* abstract namespace */
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ERR_IO;
	sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sun, len);
	close(fd);
	return sent == (ssize_t)strlen(state) ? 0 : ERR_IO;
}
