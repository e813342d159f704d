/*
 * notify.h - the systemd notification protocol (sd_notify), by hand.
 *
 * Under a Type=notify unit systemd passes a datagram socket in
 * $NOTIFY_SOCKET; a process reports state by sending lines such as
 * "READY=1".  Outside systemd the variable is unset and these calls do
 * nothing.  Writing the 30 lines here avoids a dependency on libsystemd.
 */
#ifndef COMMON_NOTIFY_H
#define COMMON_NOTIFY_H

/* Sends state (e.g. "READY=1\nSTATUS=serving").  Returns 0 when sent or
 * when not under systemd, ERR_IO otherwise. */
int notify_send(const char *state);

#endif
