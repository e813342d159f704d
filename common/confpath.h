/*
 * confpath.h - which config file a program reads when it is given no -c.
 *
 * relayctl runs by hand, from any directory, so it looks where an install
 * puts the file before the checkout's copy.  The daemons do not use this:
 * their units and `make run` always pass -c.
 */
#ifndef COMMON_CONFPATH_H
#define COMMON_CONFPATH_H

#include <stddef.h>

/* The environment variable that names relayctl's config file. */
#define CONFPATH_ENV "CRELAY_CONFIG"

/* Where relayctl looks, in order, when neither -c nor CONFPATH_ENV names
 * a file: an install's, then the checkout's. */
#define CONFPATH_SYSTEM "/etc/crelay/relay.conf"
#define CONFPATH_LOCAL "etc/relay.conf"

/* The path to read: given (-c) when not NULL, else env when not NULL or
 * empty, else the first of the n candidates that exists, else NULL (the
 * defaults).  A path named by given or env is returned even when missing,
 * so that loading it reports the mistake.  Returns a borrowed pointer. */
const char *confpath_pick(const char *given, const char *env, const char *const *candidates,
			  size_t n);

#endif
