/*
 * status-page.test.mjs - what a person sees when a browser opens the
 * relay's URL: headless Chromium loads the status page, runs its script
 * (which fetches /stats.json), and the rendered DOM must show the relay's
 * name, description, contact, supported NIPs, limits and live figures
 * (events stored after the test published some), the URL to paste into a
 * client, the version and the uptime, with units and thousands separators
 * on the limits.  A screenshot is kept
 * next to the test run for a human look.  And a page that opens a
 * websocket with ws_deflate = 1 must negotiate permessage-deflate and read
 * a compressed event intact.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useRelay, until } from '../integration/lib/relay.mjs';
import { keypair, signed } from '../integration/lib/client.mjs';

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

function chromium(args) {
  const profile = mkdtempSync(join(tmpdir(), 'relay-chromium-'));
  try {
    return spawnSync(CHROMIUM, ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--disable-quic', `--user-data-dir=${profile}`, ...args], { encoding: 'utf8', timeout: 60000 });
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

/* A page whose script opens a websocket to url, asks for the event id,
 * and writes what it got and the negotiated extensions into the DOM.
 * Headless Chromium's virtual time does not wait for a websocket, so the
 * script keeps a fetch of /stats.json pending until the answer is in.  The
 * page is a file in dir: Chromium refuses a data: page's requests to
 * loopback (Private Network Access). */
function wsPage(dir, url, id) {
  const stats = `${url.replace('ws://', 'http://')}/stats.json`;
  const script = `const ws = new WebSocket(${JSON.stringify(url)}); const got = []; let done = false;
ws.onopen = () => ws.send(JSON.stringify(['REQ', 'b', { ids: [${JSON.stringify(id)}] }]));
ws.onmessage = (m) => { got.push(JSON.parse(m.data));
  if (got[got.length - 1][0] === 'EOSE') { document.getElementById('out').textContent =
    JSON.stringify({ extensions: ws.extensions, got }); done = true; ws.close(); } };
ws.onclose = (e) => { if (!done) document.getElementById('out').textContent = 'closed ' + e.code; done = true; };
(async () => { for (let i = 0; i < 500 && !done; i++)
  await fetch(${JSON.stringify(stats)}, { mode: 'no-cors' }).catch(() => {}); })();`;
  const file = join(dir, 'ws.html');
  writeFileSync(file, `<pre id="out">waiting</pre><script>${script}</script>`);
  return `file://${file}`;
}

describe('permessage-deflate in a browser', () => {
  const relay = useRelay({ workers: 1, config: { ws_deflate: 1 } });

  it('Chromium negotiates it and reads a compressed event intact', async () => {
    const kp = keypair();
    const c = await relay.connect();
    const ev = signed(kp.sk, { content: 'compressible '.repeat(100) });
    assert.equal((await c.publish(ev)).ok, true);
    const run = chromium(['--virtual-time-budget=5000', '--dump-dom', wsPage(relay.dir, relay.url, ev.id)]);
    assert.equal(run.status, 0, run.stderr);
    const m = run.stdout.match(/<pre id="out">([^<]*)<\/pre>/);
    assert.ok(m, run.stdout);
    const out = JSON.parse(m[1].replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
    assert.equal(out.extensions,
      'permessage-deflate; server_no_context_takeover; client_no_context_takeover');
    assert.deepEqual(out.got, [['EVENT', 'b', ev], ['EOSE', 'b']]);
  });
});

describe('the status page in a browser', () => {
  const relay = useRelay({
    workers: 2,
    config: { relay_name: 'Status Page Relay', relay_description: 'rendered by chromium',
      relay_contact: 'ops@example.invalid', max_filters: 7 },
  });

  it('shows the name, texts, NIPs, limits and live figures', async () => {
    const kp = keypair();
    const c = await relay.connect();
    for (let i = 0; i < 3; i++) assert.equal((await c.publish(signed(kp.sk, { content: `p${i}` }))).ok, true);
    /* stored counts the events table every 10 s; wait until it has. */
    await until(async () => JSON.parse((await relay.httpGet('/stats.json')).body).events_stored >= 3,
      { timeout: 15000, interval: 500, what: 'stats.json to count the events' });
    const url = `http://127.0.0.1:${relay.port}/`;
    const run = chromium(['--virtual-time-budget=5000', '--dump-dom', url]);
    assert.equal(run.status, 0, run.stderr);
    const dom = run.stdout;
    assert.match(dom, /<h1 id="name">Status Page Relay<\/h1>/);
    assert.match(dom, /rendered by chromium/);
    assert.match(dom, /Contact: ops@example\.invalid/);
    assert.match(dom, /<p id="nips">1, 9, 11, /);
    assert.match(dom, /<td>max filters<\/td><td>7<\/td>/);
    /* What to paste into a client, the version, the uptime; units and
     * thousands separators on the limits. */
    assert.match(dom, new RegExp(`<code id="url">ws://127\\.0\\.0\\.1:${relay.port}</code>`));
    assert.match(dom, /<span id="version">version \d+\.\d+\.\d+<\/span>/);
    assert.match(dom, /<span id="uptime">\d+ (s|min)<\/span>/);
    assert.match(dom, /<td>max message length<\/td><td>\d{1,3}(,\d{3})+ bytes<\/td>/);
    assert.match(dom, /<td>max content length<\/td><td>\d{1,3}(,\d{3})* characters<\/td>/);
    assert.match(dom, /<td>auth required<\/td><td>no<\/td>/);
    const stored = dom.match(/<b id="events_stored">(\d+)<\/b>/);
    assert.ok(stored, 'the live figures were not filled in');
    assert.ok(Number(stored[1]) >= 3);
    const shot = join(relay.dir, 'status-page.png');
    chromium(['--window-size=1000,900', `--screenshot=${shot}`, '--virtual-time-budget=3000', url]);
    assert.ok(existsSync(shot), 'no screenshot');
  });
});
