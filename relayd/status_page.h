/*
 * status_page.h - the small self-contained HTML page a browser gets at the
 * relay's URL: name, description, contact, supported NIPs and limits (from
 * the NIP-11 document embedded in it), the URL a client dials, the version,
 * stored's uptime and live figures it refreshes from /stats.json.  Numbers
 * have thousands separators and limits their units.  No external assets.
 */
#ifndef RELAYD_STATUS_PAGE_H
#define RELAYD_STATUS_PAGE_H

#include <stddef.h>

/* Builds the page around nip11_json (a JSON object) and relay_url (the
 * configured one, or "" to show the URL the browser reached).  Returns a
 * malloc'ed NUL-terminated page with its length in *len, or NULL without
 * memory. */
char *status_page_render(const char *nip11_json, const char *relay_url, size_t *len);

#endif
