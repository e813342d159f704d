/*
 * notify.h - the systemd notification protocol (sd_notify), by hand.
 *
 * Under a Type=notify unit systemd passes a datagram socket in
 * $NOTIFY_SOCKET; a process reports state by sending lines such as
 * "READY=1".  Outside systemd the variable is unset and notify_send() does
 * nothing.  It keeps no state and is thread-safe.  The protocol is small
 * enough to write here, so the relay needs no libsystemd.
 */
#ifndef COMMON_NOTIFY_H
#define COMMON_NOTIFY_H

/* Sends state, NUL-terminated lines such as "READY=1\nSTATUS=serving".
 * Returns 0 when sent or when not under systemd, ERR_IO when sending failed. */
int notify_send(const char *state);

#endif
