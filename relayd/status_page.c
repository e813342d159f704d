/* status_page.c - the HTML status page (see status_page.h). */
#include "status_page.h"

#include <string.h>

#include "../common/buf.h"
#include "../common/jsonstr.h"

/* The page before and after the embedded NIP-11 document.  Text is set with
 * textContent only, so nothing from the document is interpreted as HTML. */
static const char page_head[] =
	"<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	"<title>Nostr relay</title>\n<style>\n"
	"body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
	"color:#222;background:#fafafa}\n"
	"h1{margin-bottom:.2rem}.muted{color:#666}\n"
	"table{border-collapse:collapse;width:100%;margin:.5rem 0 1.5rem}\n"
	"td{border-bottom:1px solid #ddd;padding:.3rem .4rem}td:last-child{text-align:right}\n"
	".live{display:flex;gap:1rem;flex-wrap:wrap}.live div{background:#fff;border:1px solid #ddd;"
	"border-radius:6px;padding:.6rem 1rem;min-width:9rem}.live b{display:block;font-size:1.6rem}\n"
	"</style></head><body>\n"
	"<h1 id=\"name\"></h1><p id=\"description\"></p><p class=\"muted\" id=\"contact\"></p>\n"
	"<p>Relay URL, for a Nostr client: <code id=\"url\"></code></p>\n"
	"<p class=\"muted\"><span id=\"version\"></span>, up <span id=\"uptime\">-</span></p>\n"
	"<h2>Now</h2><div class=\"live\">\n"
	"<div><b id=\"connections\">-</b>connections</div>\n"
	"<div><b id=\"events_stored\">-</b>events stored</div>\n"
	"<div><b id=\"events_per_second\">-</b>events/s</div>\n"
	"<div><b id=\"subscriptions\">-</b>subscriptions</div></div>\n"
	"<h2>Supported NIPs</h2><p id=\"nips\"></p>\n"
	"<h2>Limits</h2><table id=\"limits\"></table>\n"
	"<script>\nconst doc = ";

/* Between the document and the configured relay_url (a JSON string). */
static const char page_middle[] = ";\nconst configuredUrl = ";

/* Units of the limits that have one; the rest are counts or yes/no. */
static const char page_tail[] =
	";\n"
	"const $ = (id) => document.getElementById(id);\n"
	"const num = (v) => Number(v).toLocaleString('en-US');\n"
	"const units = {max_message_length: 'bytes', max_subid_length: 'characters',\n"
	"  max_content_length: 'characters', created_at_lower_limit: 'seconds',\n"
	"  created_at_upper_limit: 'seconds', min_pow_difficulty: 'bits'};\n"
	"function limit(k, v) {\n"
	"  if (typeof v === 'boolean') return v ? 'yes' : 'no';\n"
	"  return typeof v === 'number' ? num(v) + (units[k] ? ' ' + units[k] : '') : String(v);\n"
	"}\n"
	"function duration(s) {\n"
	"  const d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);\n"
	"  if (d) return d + ' d ' + h + ' h';\n"
	"  if (h) return h + ' h ' + m + ' min';\n"
	"  return m ? m + ' min' : Math.floor(s) + ' s';\n"
	"}\n"
	"$('url').textContent = configuredUrl ||\n"
	"  (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host;\n"
	"$('version').textContent = 'version ' + (doc.version || '?');\n"
	"$('name').textContent = doc.name || 'Nostr relay';\n"
	"document.title = doc.name || 'Nostr relay';\n"
	"$('description').textContent = doc.description || '';\n"
	"$('contact').textContent = doc.contact ? 'Contact: ' + doc.contact : '';\n"
	"$('nips').textContent = (doc.supported_nips || []).join(', ');\n"
	"for (const [k, v] of Object.entries(doc.limitation || {})) {\n"
	"  const tr = document.createElement('tr');\n"
	"  const a = document.createElement('td'); a.textContent = k.replace(/_/g, ' ');\n"
	"  const b = document.createElement('td'); b.textContent = limit(k, v);\n"
	"  tr.append(a, b); $('limits').append(tr);\n"
	"}\n"
	"async function refresh() {\n"
	"  try {\n"
	"    const s = await (await fetch('/stats.json', {cache: 'no-store'})).json();\n"
	"    for (const k of ['connections', 'events_stored', 'events_per_second', 'subscriptions'])\n"
	"      if (k in s) $(k).textContent = num(s[k]);\n"
	"    if ('uptime_seconds' in s) $('uptime').textContent = duration(s.uptime_seconds);\n"
	"  } catch (e) { /* the relay is restarting; try again later */ }\n"
	"}\n"
	"refresh(); setInterval(refresh, 2000);\n"
	"</script></body></html>\n";

/* Appends JSON text; "<" inside it could close the script element. */
static int status_page_embed(struct buf *b, const char *json, size_t len)
{
	int failed = 0;

	for (size_t i = 0; i < len && !failed; i++)
		failed = json[i] == '<' ? buf_append_str(b, "\\u003c") : buf_append_byte(b, json[i]);
	return failed;
}

char *status_page_render(const char *nip11_json, const char *relay_url, size_t *len)
{
	struct buf b = BUF_INIT, url = BUF_INIT;
	int failed = buf_append_str(&b, page_head) || jsonstr_append_wire(&url, relay_url, strlen(relay_url));

	failed = failed || status_page_embed(&b, nip11_json, strlen(nip11_json));
	failed = failed || buf_append_str(&b, page_middle) || status_page_embed(&b, url.data, url.len);
	buf_free(&url);
	failed = failed || buf_append_str(&b, page_tail);
	if (failed) {
		buf_free(&b);
		return NULL;
	}
	*len = b.len;
	return buf_take(&b);
}
