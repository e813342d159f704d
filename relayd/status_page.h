/*
 * status_page.h - the small self-contained HTML page a browser gets at the
 * relay's URL: name, description, contact, supported NIPs and limits (from
 * the NIP-11 document embedded in it) and live figures it refreshes from
 * /stats.json.  No external assets.
 */
#ifndef RELAYD_STATUS_PAGE_H
#define RELAYD_STATUS_PAGE_H

#include <stddef.h>

/* Builds the page around nip11_json (a JSON object).  Returns a malloc'ed
 * NUL-terminated page with its length in *len, or NULL without memory. */
char *status_page_render(const char *nip11_json, size_t *len);

#endif
