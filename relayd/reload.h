/*
 * reload.h - applying a new configuration to a running worker.
 *
 * SIGHUP (systemctl reload, relayctl reload) makes the service thread read
 * the config file again.  A file that does not load is rejected whole and
 * the running snapshot stays.  A key whose change needs a worker restart
 * (common/config.c's "change needs" column: listening address, paths,
 * thread counts, and stored's max_limit and search, which NIP-11 shows)
 * keeps its running value and is named in the log.  Every other key
 * (limits, NIP-11 texts, access rules, log level) takes effect for the next
 * message, without dropping a connection.
 */
#ifndef RELAYD_RELOAD_H
#define RELAYD_RELOAD_H

struct relayd;

/* Re-reads r->config_path and swaps the snapshot in (service thread). */
void reload_apply(struct relayd *r);

/* Recomputes what the worker derives from the snapshot (relay URL, access
 * flags).  Called at start and by reload_apply().  Warns when relay_url is
 * unset and the bind takes every interface. */
void reload_derive(struct relayd *r);

#endif
