/* status_page.c - the HTML status page (see status_page.h). */
#include "status_page.h"

#include "../common/buf.h"

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
	"<h2>Now</h2><div class=\"live\">\n"
	"<div><b id=\"connections\">-</b>connections</div>\n"
	"<div><b id=\"events_stored\">-</b>events stored</div>\n"
	"<div><b id=\"events_per_second\">-</b>events/s</div>\n"
	"<div><b id=\"subscriptions\">-</b>subscriptions</div></div>\n"
	"<h2>Supported NIPs</h2><p id=\"nips\"></p>\n"
	"<h2>Limits</h2><table id=\"limits\"></table>\n"
	"<p class=\"muted\">Connect a Nostr client to this address over websocket.</p>\n"
	"<script>\nconst doc = ";

static const char page_tail[] =
	";\n"
	"const $ = (id) => document.getElementById(id);\n"
	"$('name').textContent = doc.name || 'Nostr relay';\n"
	"document.title = doc.name || 'Nostr relay';\n"
	"$('description').textContent = doc.description || '';\n"
	"$('contact').textContent = doc.contact ? 'Contact: ' + doc.contact : '';\n"
	"$('nips').textContent = (doc.supported_nips || []).join(', ');\n"
	"for (const [k, v] of Object.entries(doc.limitation || {})) {\n"
	"  const tr = document.createElement('tr');\n"
	"  const a = document.createElement('td'); a.textContent = k.replace(/_/g, ' ');\n"
	"  const b = document.createElement('td'); b.textContent = String(v);\n"
	"  tr.append(a, b); $('limits').append(tr);\n"
	"}\n"
	"async function refresh() {\n"
	"  try {\n"
	"    const s = await (await fetch('/stats.json', {cache: 'no-store'})).json();\n"
	"    for (const k of ['connections', 'events_stored', 'events_per_second', 'subscriptions'])\n"
	"      if (k in s) $(k).textContent = String(s[k]);\n"
	"  } catch (e) { /* the relay is restarting; try again later */ }\n"
	"}\n"
	"refresh(); setInterval(refresh, 2000);\n"
	"</script></body></html>\n";

char *status_page_render(const char *nip11_json, size_t *len)
{
	struct buf b = BUF_INIT;
	int failed = buf_append_str(&b, page_head);

	/* "<" inside the embedded JSON could close the script element. */
	for (const char *p = nip11_json; *p && !failed; p++)
		failed = *p == '<' ? buf_append_str(&b, "\\u003c") : buf_append_byte(&b, *p);
	failed = failed || buf_append_str(&b, page_tail);
	if (failed) {
		buf_free(&b);
		return NULL;
	}
	*len = b.len;
	return buf_take(&b);
}
