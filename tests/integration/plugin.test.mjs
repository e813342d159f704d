/*
 * plugin.test.mjs - write-policy plugins in strfry's format (the `plugin`
 * key; stored/plugin.h).
 *
 * The plugins are the example programs in plugins/ (shell, Python, Node).
 * Each case checks the client's OK and then what is stored: every event
 * answered OK true is there (except a shadowReject), and none answered
 * OK false is.  The failure cases (a hang, a crash, garbage) send ordinary
 * events beside the bad one, and wait for the plugin to come back with
 * generous bounds, never for a time.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { spawn } from 'node:child_process';
import { binary, Relay, useRelay, itStopsCleanly, until, relayctlInput } from './lib/relay.mjs';
import { Client, keypair, signed } from './lib/client.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const PLUGINS = resolve(HERE, 'plugins');
/* hang.mjs runs with `env node`: the node running this test. */
process.env.PATH = `${dirname(process.execPath)}:${process.env.PATH}`;

function pluginRelay(name, extra = {}, workers = 1) {
  return useRelay({ workers, config: { plugin: join(PLUGINS, name), ...extra } });
}

/* Publishes events at once and resolves their OKs, in order. */
function publishAll(c, events) {
  return Promise.all(events.map((ev) => c.publish(ev, { timeout: 15000 })));
}

/* The ids among ids that are stored. */
async function storedIds(c, ids) {
  const r = await c.req(`q${Math.random().toString(36).slice(2, 8)}`, { ids });
  return new Set(r.events.map((e) => e.id));
}

/* Asserts that exactly the events answered OK true are stored: nothing
 * acknowledged lost, nothing refused kept. */
async function assertStoredAsAnswered(c, events, oks) {
  const have = await storedIds(c, events.map((e) => e.id));
  events.forEach((ev, i) => {
    assert.equal(have.has(ev.id), oks[i].ok === true,
      `event ${i} (${ev.content}) answered ${JSON.stringify(oks[i].frame)}, stored: ${have.has(ev.id)}`);
  });
}

/* Publishes fresh events until one is accepted: the plugin is back. */
async function untilAccepted(c, sk) {
  let ok = null;
  await until(async () => {
    ok = await c.publish(signed(sk, { content: `after ${Math.random()}` }), { timeout: 15000 });
    return ok.ok === true;
  }, { timeout: 30000, interval: 100, what: 'an event accepted after the plugin came back' });
  return ok;
}

async function pluginStats(relay) {
  const r = await relay.relayctl('--json', 'stats');
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout).plugin;
}

/* The requests policy.py logged (requests.log in the relay's directory). */
function loggedRequests(relay) {
  const path = join(relay.dir, 'requests.log');
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

describe('plugin: accept, reject, shadowReject (policy.py)', () => {
  const relay = pluginRelay('policy.py');

  it('answers each action as strfry does and stores only the accepted events', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const events = ['fine', 'reject-plain x', 'reject-prefixed x', 'shadow x'].map(
      (content) => signed(sk, { content }));
    const oks = await publishAll(c, events);
    assert.deepEqual(oks.map((o) => [o.ok, o.message]), [
      [true, ''],
      [false, 'blocked: not today'],
      [false, 'restricted: members only'],
      [true, ''],
    ]);
    const have = await storedIds(c, events.map((e) => e.id));
    assert.deepEqual(events.map((e) => have.has(e.id)), [true, false, false, false]);
  });

  it('sends strfry\'s request: type, the event, receivedAt, sourceType, sourceInfo', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const ev = signed(sk, { content: 'look at me', tags: [['t', 'x']] });
    await c.mustPublish(ev);
    const req = loggedRequests(relay).find((r) => r.event.id === ev.id);
    assert.ok(req, 'the plugin saw the event');
    assert.equal(req.type, 'new');
    assert.deepEqual(req.event, ev);
    assert.equal(req.sourceType, 'IP4');
    assert.equal(req.sourceInfo, '127.0.0.1');
    assert.ok(Math.abs(req.receivedAt - Date.now() / 1000) < 600, `receivedAt ${req.receivedAt}`);
  });

  it('does not ask about an event already stored: duplicate: as without a plugin', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const ev = signed(sk, { content: 'once' });
    await c.mustPublish(ev);
    const again = await c.publish(ev);
    assert.equal(again.ok, true);
    assert.match(again.message, /^duplicate:/);
    assert.equal(loggedRequests(relay).filter((r) => r.event.id === ev.id).length, 1);
  });

  it('puts imported events to the plugin with sourceType Import', async () => {
    const { sk } = keypair();
    const good = signed(sk, { content: 'imported' });
    const bad = signed(sk, { content: 'reject-plain imported' });
    const r = await relayctlInput(relay, ['import'], `${JSON.stringify(good)}\n${JSON.stringify(bad)}\n`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /1 stored, 0 duplicate, 0 superseded, 1 refused/);
    assert.match(r.stderr, /blocked: not today/);
    const seen = loggedRequests(relay).filter((q) => q.event.id === good.id || q.event.id === bad.id);
    assert.deepEqual(seen.map((q) => q.sourceType), ['Import', 'Import']);
    const c = await relay.connect();
    const have = await storedIds(c, [good.id, bad.id]);
    assert.deepEqual([have.has(good.id), have.has(bad.id)], [true, false]);
  });

  it('puts events relayctl sync fetches with sourceType Sync, and stream\'s with Stream', async () => {
    const peer = new Relay({ workers: 1 });
    await peer.start();
    try {
      const { sk, pk } = keypair();
      const synced = signed(sk, { content: 'synced' }), streamed = signed(sk, { content: 'streamed' });
      const pub = await Client.open(peer.url);
      await pub.mustPublish(synced);
      const r = await relayctlInput(relay, ['sync', peer.url, JSON.stringify({ ids: [synced.id] })]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const child = spawn(binary('relayctl'), ['-c', relay.configPath, 'stream', peer.url,
        JSON.stringify({ authors: [pk] })], { cwd: relay.dir });
      const exited = new Promise((res) => child.once('close', (code) => res(code)));
      await pub.mustPublish(streamed);
      await until(() => loggedRequests(relay).some((q) => q.event.id === streamed.id),
        { timeout: 15000, what: 'the streamed event at the plugin' });
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
      await pub.end();
      const types = (id) => loggedRequests(relay).filter((q) => q.event.id === id).map((q) => q.sourceType);
      assert.deepEqual(types(synced.id), ['Sync']);
      assert.deepEqual(types(streamed.id), ['Stream']);
    } finally {
      await peer.stop();
    }
  });

  it('counts its answers in relayctl stats', async () => {
    const st = await pluginStats(relay);
    assert.ok(st.accepted >= 3 && st.rejected >= 3 && st.shadow_rejected >= 1, JSON.stringify(st));
  });

  itStopsCleanly(relay);
});

describe('plugin: sourceInfo behind a proxy (real_ip_header)', () => {
  const relay = pluginRelay('policy.py', { real_ip_header: 'X-Forwarded-For' });

  for (const [address, type] of [['203.0.113.5', 'IP4'], ['2001:db8::7', 'IP6']]) {
    it(`names the forwarded client ${address} as ${type}`, async () => {
      const ws = new WebSocket(relay.url, { headers: { 'X-Forwarded-For': address } });
      await new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); });
      const c = new Client(ws, null);
      relay.clients.add(c);
      const ev = signed(keypair().sk, { content: `from ${address}` });
      await c.mustPublish(ev);
      const req = loggedRequests(relay).find((r) => r.event.id === ev.id);
      assert.deepEqual([req.sourceType, req.sourceInfo], [type, address]);
    });
  }

  itStopsCleanly(relay);
});

describe('plugin: a whitelist in shell (whitelist.sh)', () => {
  const relay = pluginRelay('whitelist.sh');

  it('accepts the listed pubkey and blocks the others', async () => {
    const friend = keypair();
    const stranger = keypair();
    writeFileSync(join(relay.dir, 'whitelist.txt'), `${friend.pk}\n`);
    const c = await relay.connect();
    const events = [signed(friend.sk, { content: 'hi' }), signed(stranger.sk, { content: 'hi' })];
    const oks = await publishAll(c, events);
    assert.deepEqual(oks.map((o) => [o.ok, o.message]),
      [[true, ''], [false, 'blocked: not on the whitelist']]);
    await assertStoredAsAnswered(c, events, oks);
  });

  itStopsCleanly(relay);
});

describe('plugin: one rate limiter for every worker (ratelimit.py)', () => {
  const relay = pluginRelay('ratelimit.py', {}, 2);

  it('counts a pubkey\'s events from both workers together', async () => {
    const { sk } = keypair();
    const one = await relay.connectTo(1);
    const two = await relay.connectTo(2);
    const oks = [];
    const events = [];
    for (const c of [one, two, one, two]) {
      const ev = signed(sk, { content: `n${events.length}` });
      events.push(ev);
      oks.push(await c.publish(ev));
    }
    assert.deepEqual(oks.map((o) => o.ok), [true, true, true, false]);
    assert.equal(oks[3].message, 'rate-limited: 3 events an hour');
    await assertStoredAsAnswered(one, events, oks);
  });

  itStopsCleanly(relay);
});

describe('plugin: an answer that never comes (hang.mjs)', () => {
  const relay = pluginRelay('hang.mjs', { plugin_timeout_ms: 300 });

  it('answers error: past plugin_timeout_ms, restarts the plugin, loses nothing', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const events = [signed(sk, { content: 'before' }), signed(sk, { content: 'hang here' }),
      signed(sk, { content: 'beside' })];
    const oks = await publishAll(c, events);
    assert.equal(oks[1].ok, false);
    assert.match(oks[1].message, /^error: /);
    for (const o of oks) assert.ok(o.ok === true || /^error: /.test(o.message), JSON.stringify(o.frame));
    await assertStoredAsAnswered(c, events, oks);
    await untilAccepted(c, sk);
    const st = await pluginStats(relay);
    assert.ok(st.timeouts >= 1 && st.restarts >= 1, JSON.stringify(st));
  });

  itStopsCleanly(relay);
});

describe('plugin: a slow answer holds back only its own connection (hang.mjs)', () => {
  const relay = pluginRelay('hang.mjs', { plugin_timeout_ms: 60000, store_timeout_ms: 120000 });

  it('answers another connection at once, and this one\'s later event only after', async () => {
    const { sk } = keypair();
    const slow = await relay.connect();
    const other = await relay.connect();
    const hung = signed(sk, { content: 'hang for a minute' });
    const after = signed(sk, { content: 'after the hung one' });
    slow.send(['EVENT', hung]);
    slow.send(['EVENT', after]);
    /* other's event reaches the plugin after both of slow's. */
    await until(() => {
      const ids = loggedRequests(relay).map((r) => r.event.id);
      return ids.includes(hung.id) && ids.includes(after.id);
    }, { timeout: 30000, what: 'the plugin to have both events of the slow connection' });
    const ok = await other.publish(signed(sk, { content: 'meanwhile' }), { timeout: 30000 });
    assert.deepEqual([ok.ok, ok.message], [true, '']);
    assert.equal(slow.inbox.filter((f) => f[0] === 'OK').length, 0, JSON.stringify(slow.inbox));
  });

  itStopsCleanly(relay);
});

describe('plugin: fail-open (hang.mjs, plugin_fail_open = 1)', () => {
  const relay = pluginRelay('hang.mjs', { plugin_timeout_ms: 300, plugin_fail_open: 1 });

  it('stores the event the plugin did not judge in time', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const ev = signed(sk, { content: 'hang but open' });
    const ok = await c.publish(ev, { timeout: 15000 });
    assert.deepEqual([ok.ok, ok.message], [true, '']);
    assert.ok((await storedIds(c, [ev.id])).has(ev.id));
    assert.ok((await pluginStats(relay)).fail_open >= 1);
  });

  itStopsCleanly(relay);
});

describe('plugin: a full queue (hang.mjs, plugin_queue = 2)', () => {
  const relay = pluginRelay('hang.mjs', { plugin_timeout_ms: 5000, plugin_queue: 2 });

  it('refuses rate-limited: at once while the queue is full, and answers every event', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const events = [signed(sk, { content: 'hang first' })];
    for (let i = 0; i < 20; i++) events.push(signed(sk, { content: `queued ${i}` }));
    const oks = await publishAll(c, events);
    assert.ok(oks.some((o) => o.ok === false && /^rate-limited: /.test(o.message)),
      JSON.stringify(oks.map((o) => o.message)));
    await assertStoredAsAnswered(c, events, oks);
  });

  itStopsCleanly(relay);
});

describe('plugin: a plugin that exits (crash.sh)', () => {
  const relay = pluginRelay('crash.sh');

  it('answers error: for what it held, starts it again, and later events are stored', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const events = [signed(sk, { content: 'first' }), signed(sk, { content: 'crash-now' }),
      signed(sk, { content: 'third' })];
    const oks = await publishAll(c, events);
    assert.equal(oks[1].ok, false);
    assert.match(oks[1].message, /^error: /);
    for (const o of oks) assert.ok(o.ok === true || /^error: /.test(o.message), JSON.stringify(o.frame));
    await assertStoredAsAnswered(c, events, oks);
    await untilAccepted(c, sk);
    const st = await pluginStats(relay);
    assert.ok(st.failures >= 1 && st.restarts >= 1, JSON.stringify(st));
  });

  itStopsCleanly(relay);
});

describe('plugin: a plugin that prints garbage (garbage.py)', () => {
  const relay = pluginRelay('garbage.py');

  it('answers error:, stores nothing half-decided, and recovers', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const events = [signed(sk, { content: 'garbage please' }), signed(sk, { content: 'normal' })];
    const oks = await publishAll(c, events);
    assert.equal(oks[0].ok, false);
    assert.match(oks[0].message, /^error: /);
    await assertStoredAsAnswered(c, events, oks);
    await untilAccepted(c, sk);
  });

  itStopsCleanly(relay);
});

/* A plugin file of the relay's own that rejects everything with its
 * version and pid in the message. */
function versionPlugin(version) {
  return `#!/usr/bin/env python3
import json, os, sys
for line in sys.stdin:
    ev = json.loads(line)["event"]
    print(json.dumps({"id": ev["id"], "action": "reject",
                      "msg": "blocked: ${version} pid %d" % os.getpid()}), flush=True)
`;
}

describe('plugin: reload on a changed file and on SIGHUP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-plugin-'));
  const path = join(dir, 'reload.py');
  writeFileSync(path, versionPlugin('v1'), { mode: 0o755 });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const relay = useRelay({ workers: 1, config: { plugin: path } });

  async function answer(c) {
    return (await c.publish(signed(keypair().sk, { content: 'which' }))).message;
  }

  it('runs the new program once its file changes', async () => {
    const c = await relay.connect();
    assert.match(await answer(c), /^blocked: v1 pid \d+$/);
    const tmp = `${path}.new`;
    writeFileSync(tmp, versionPlugin('v2'), { mode: 0o755 });
    copyFileSync(tmp, path);
    await until(async () => /^blocked: v2 /.test(await answer(c)),
      { timeout: 30000, interval: 200, what: 'the v2 plugin answering' });
  });

  it('starts the program again on SIGHUP', async () => {
    const c = await relay.connect();
    const before = (await answer(c)).match(/pid (\d+)/)[1];
    await relay.kill('stored', 'SIGHUP');
    await until(async () => (await answer(c)).match(/pid (\d+)/)[1] !== before,
      { timeout: 30000, interval: 200, what: 'a new plugin process after SIGHUP' });
  });

  itStopsCleanly(relay);
});
