/*
 * nip86.test.mjs - the NIP-86 relay management API: JSON-RPC over HTTP
 * POST (Content-Type application/nostr+json+rpc) with NIP-98 authorization
 * by a configured admin; every method's effect on the relay; the same state
 * through relayctl; and that it survives a restart of stored.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { createHash } from 'node:crypto';
import { useRelay, until, HOST } from './lib/relay.mjs';
import { Client, keypair, signed, now } from './lib/client.mjs';
import WebSocket from 'ws';

const admin = keypair();

function authorization(kp, url, body, { created_at = now(), method = 'POST', payload } = {}) {
  const hash = payload ?? createHash('sha256').update(body).digest('hex');
  const ev = signed(kp.sk, { kind: 27235, created_at, tags: [['u', url], ['method', method], ['payload', hash]] });
  return 'Nostr ' + Buffer.from(JSON.stringify(ev)).toString('base64');
}

function post(relay, body, headers) {
  return new Promise((resolve, reject) => {
    const req = request({ host: HOST, port: relay.port, path: '/', method: 'POST', headers, timeout: 15000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, body: text, json: (() => { try { return JSON.parse(text); } catch { return null; } })() }));
    });
    req.on('timeout', () => req.destroy(new Error('POST timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

async function call(relay, method, params = [], { kp = admin, url = `http://${HOST}:${relay.port}`, type = 'application/nostr+json+rpc', auth } = {}) {
  const body = JSON.stringify({ method, params });
  return post(relay, body, { 'Content-Type': type, Authorization: auth ?? authorization(kp, url, body) });
}

async function ok(relay, method, params) {
  const r = await call(relay, method, params);
  assert.equal(r.status, 200, `${method}: HTTP ${r.status} ${r.body}`);
  assert.equal(r.json.error ?? null, null, `${method}: ${r.body}`);
  return r.json.result;
}

describe('NIP-86 management API', () => {
  const relay = useRelay({ workers: 2, config: { admin_pubkeys: admin.pk, real_ip_header: 'X-Forwarded-For' } });

  it('refuses requests without a valid NIP-98 authorization by an admin', async () => {
    const body = JSON.stringify({ method: 'supportedmethods', params: [] });
    const url = `http://${HOST}:${relay.port}`;
    const cases = [
      ['no authorization', { 'Content-Type': 'application/nostr+json+rpc' }],
      ['not an admin', { 'Content-Type': 'application/nostr+json+rpc', Authorization: authorization(keypair(), url, body) }],
      ['wrong payload', { 'Content-Type': 'application/nostr+json+rpc', Authorization: authorization(admin, url, body, { payload: 'a'.repeat(64) }) }],
      ['another url', { 'Content-Type': 'application/nostr+json+rpc', Authorization: authorization(admin, 'http://example.invalid', body) }],
      ['too old', { 'Content-Type': 'application/nostr+json+rpc', Authorization: authorization(admin, url, body, { created_at: now() - 600 }) }],
      ['method GET', { 'Content-Type': 'application/nostr+json+rpc', Authorization: authorization(admin, url, body, { method: 'GET' }) }],
    ];
    for (const [what, headers] of cases) {
      const r = await post(relay, body, headers);
      assert.equal(r.status, 401, `${what}: ${r.status} ${r.body}`);
    }
    const wrongType = await call(relay, 'supportedmethods', [], { type: 'application/json' });
    assert.equal(wrongType.status, 415);
  });

  it('NIP-11 lists 86 while admins are configured', async () => {
    const doc = JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
    assert.ok(doc.supported_nips.includes(86));
  });

  it('supportedmethods lists every method', async () => {
    const methods = await ok(relay, 'supportedmethods');
    for (const m of ['supportedmethods', 'banpubkey', 'listbannedpubkeys', 'allowpubkey', 'listallowedpubkeys',
      'banevent', 'listbannedevents', 'allowkind', 'disallowkind', 'listallowedkinds', 'blockip', 'unblockip',
      'listblockedips', 'changerelayname', 'changerelaydescription', 'changerelayicon', 'stats'])
      assert.ok(methods.includes(m), m);
    const unknown = await call(relay, 'nosuchmethod');
    assert.equal(typeof unknown.json.error, 'string');
  });

  it('banpubkey refuses the author; listbannedpubkeys shows it; unbanpubkey lifts it', async () => {
    const bad = keypair();
    assert.equal(await ok(relay, 'banpubkey', [bad.pk, 'spam']), true);
    const c = await relay.connect();
    const r = await c.publish(signed(bad.sk, { content: 'from a banned key' }));
    assert.equal(r.ok, false);
    assert.match(r.message, /^blocked: /);
    assert.deepEqual((await ok(relay, 'listbannedpubkeys')).find((b) => b.pubkey === bad.pk), { pubkey: bad.pk, reason: 'spam' });
    assert.equal(await ok(relay, 'unbanpubkey', [bad.pk]), true);
    assert.equal((await c.publish(signed(bad.sk, { content: 'allowed again' }))).ok, true);
  });

  it('the rules hold for ephemeral events too, which are never stored: refused, not relayed', async () => {
    const bad = keypair();
    const friend = keypair();
    const c = await relay.connect();
    const listener = await relay.connectTo(2);
    assert.equal((await listener.req('eph', { kinds: [20001], limit: 0 })).eose, true);
    const relayed = (ev) => listener.liveEvent('eph', ev.id, { timeout: 300 }).then(() => true, () => false);

    assert.equal(await ok(relay, 'banpubkey', [bad.pk, 'spam']), true);
    const blocked = async () => JSON.parse((await relay.relayctl('--json', 'stats')).stdout).rejects.blocked;
    const blockedBefore = await blocked();
    const banned = signed(bad.sk, { kind: 20001, content: 'banned, ephemeral' });
    let r = await c.publish(banned);
    assert.deepEqual([r.ok, /^blocked: /.test(r.message)], [false, true], JSON.stringify(r.frame));
    assert.equal(await relayed(banned), false);
    assert.equal(await blocked(), blockedBefore + 1, 'counted in relayctl stats rejects');
    assert.equal(await ok(relay, 'unbanpubkey', [bad.pk]), true);

    assert.equal(await ok(relay, 'allowpubkey', [friend.pk, 'member']), true);
    const stranger = signed(bad.sk, { kind: 20001, content: 'not a member, ephemeral' });
    r = await c.publish(stranger);
    assert.deepEqual([r.ok, /^restricted: /.test(r.message)], [false, true], JSON.stringify(r.frame));
    assert.equal(await relayed(stranger), false);
    const fine = signed(friend.sk, { kind: 20001, content: 'member, ephemeral' });
    assert.equal((await c.publish(fine)).ok, true);
    await listener.liveEvent('eph', fine.id, { timeout: 3000 });
    assert.equal((await relay.relayctl('nip86', 'unallowpubkey', friend.pk)).code, 0);
  });

  it('banevent deletes the event and refuses it; listbannedevents shows it', async () => {
    const kp = keypair();
    const c = await relay.connect();
    const ev = signed(kp.sk, { content: 'to be banned' });
    assert.equal((await c.publish(ev)).ok, true);
    assert.equal(await ok(relay, 'banevent', [ev.id, 'illegal']), true);
    assert.deepEqual((await c.req('b', { ids: [ev.id] })).events, []);
    const again = await c.publish(ev);
    assert.equal(again.ok, false);
    assert.match(again.message, /^blocked: /);
    assert.ok((await ok(relay, 'listbannedevents')).some((b) => b.id === ev.id && b.reason === 'illegal'));
  });

  it('allowpubkey and allowkind restrict who and what may publish', async () => {
    const friend = keypair();
    const stranger = keypair();
    const c = await relay.connect();
    assert.equal(await ok(relay, 'allowpubkey', [friend.pk, 'member']), true);
    assert.ok((await ok(relay, 'listallowedpubkeys')).some((a) => a.pubkey === friend.pk));
    let r = await c.publish(signed(stranger.sk, { content: 'not a member' }));
    assert.equal(r.ok, false);
    assert.match(r.message, /^restricted: /);
    assert.equal((await c.publish(signed(friend.sk, { content: 'member' }))).ok, true);
    assert.equal(await ok(relay, 'allowkind', [1]), true);
    assert.deepEqual(await ok(relay, 'listallowedkinds'), [1]);
    r = await c.publish(signed(friend.sk, { kind: 7, content: '+' }));
    assert.equal(r.ok, false);
    assert.match(r.message, /^restricted: /);
    assert.equal(await ok(relay, 'disallowkind', [1]), true);
    assert.deepEqual(await ok(relay, 'listallowedkinds'), []);
    assert.equal((await c.publish(signed(friend.sk, { kind: 7, content: '+' }))).ok, true);
    assert.equal((await relay.relayctl('nip86', 'unallowpubkey', friend.pk)).code, 0);
    assert.equal((await c.publish(signed(stranger.sk, { content: 'open again' }))).ok, true);
  });

  it('NIP-11 restricted_writes follows the allow lists on every worker', async () => {
    /* Twelve GETs from as many source ports reach both workers. */
    const everywhere = async (want) => {
      for (let i = 0; i < 12; i++) {
        const doc = JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
        if (doc.limitation.restricted_writes !== want) return false;
      }
      return true;
    };
    await until(() => everywhere(false), { timeout: 5000, what: 'restricted_writes false' });
    assert.equal(await ok(relay, 'allowkind', [1]), true);
    await until(() => everywhere(true), { timeout: 5000, what: 'restricted_writes true' });
    assert.equal(await ok(relay, 'disallowkind', [1]), true);
    await until(() => everywhere(false), { timeout: 5000, what: 'restricted_writes false again' });
  });

  it('blockip refuses new connections from the address on every worker; unblockip lifts it', async () => {
    assert.equal(await ok(relay, 'blockip', ['127.0.0.1', 'test']), true);
    assert.ok((await ok(relay, 'listblockedips')).some((b) => b.ip === '127.0.0.1'));
    await until(async () => {
      const c = await relay.tryConnect(1000);
      if (!c) return true;
      await c.waitClosed({ timeout: 1000 }).catch(() => {});
      return !c.isOpen;
    }, { timeout: 5000, interval: 200, what: 'connections from 127.0.0.1 refused' });
    assert.equal(await ok(relay, 'unblockip', ['127.0.0.1']), true);
    await until(async () => {
      const c = await relay.tryConnect(1000);
      if (!c) return false;
      await new Promise((r) => setTimeout(r, 200));
      const open = c.isOpen;
      await c.end();
      return open;
    }, { timeout: 5000, interval: 200, what: 'connections accepted again' });
  });

  /* Whether a connection claiming X-Forwarded-For xff is served (answers a
   * REQ) rather than refused. */
  function servedAs(xff) {
    return new Promise((resolve) => {
      const ws = new WebSocket(relay.url, { headers: { 'X-Forwarded-For': xff }, handshakeTimeout: 2000 });
      ws.once('error', () => resolve(false));
      ws.once('open', async () => {
        const c = new Client(ws, null);
        const r = await c.req('alive', { limit: 1 }).catch(() => null);
        await c.end();
        resolve(!!(r && r.eose));
      });
    });
  }

  it('blockip refuses the address a trusted proxy forwards, not the proxy', async () => {
    assert.equal(await ok(relay, 'blockip', ['203.0.113.40', 'behind a proxy']), true);
    await until(async () => !(await servedAs('203.0.113.40')) && !(await servedAs('203.0.113.40')),
      { timeout: 5000, interval: 200, what: 'connections forwarded for 203.0.113.40 refused' });
    assert.equal(await servedAs('203.0.113.41'), true);
    assert.equal(await ok(relay, 'unblockip', ['203.0.113.40']), true);
    await until(() => servedAs('203.0.113.40'), { timeout: 5000, interval: 200, what: 'accepted again' });
  });

  it('changerelayname/description/icon change the NIP-11 document of every worker', async () => {
    assert.equal(await ok(relay, 'changerelayname', ['managed']), true);
    assert.equal(await ok(relay, 'changerelaydescription', ['set over NIP-86']), true);
    assert.equal(await ok(relay, 'changerelayicon', ['https://example.invalid/icon.png']), true);
    await until(async () => {
      const docs = [];
      for (let i = 0; i < 4; i++) docs.push(JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json', Connection: 'close' })).body));
      return docs.every((d) => d.name === 'managed' && d.description === 'set over NIP-86' && d.icon === 'https://example.invalid/icon.png');
    }, { timeout: 5000, interval: 200, what: 'the new texts in NIP-11' });
  });

  it('stats answers; the state survives a restart of stored and is visible to relayctl', async () => {
    const stats = await ok(relay, 'stats');
    assert.equal(typeof stats.events, 'number');
    const kp = keypair();
    assert.equal(await ok(relay, 'banpubkey', [kp.pk, 'persist']), true);
    await relay.kill('stored', 'SIGKILL');
    await relay.restartStored();
    await until(async () => (await call(relay, 'listbannedpubkeys')).status === 200, { timeout: 5000, interval: 200, what: 'the API after the restart' });
    assert.ok((await ok(relay, 'listbannedpubkeys')).some((b) => b.pubkey === kp.pk));
    const ctl = await relay.relayctl('nip86', 'listbannedpubkeys');
    assert.equal(ctl.code, 0);
    assert.match(ctl.stdout, new RegExp(kp.pk));
  });
});

describe('NIP-86 without admins', () => {
  const relay = useRelay({ workers: 1 });

  it('is off (404) when admin_pubkeys is empty, and NIP-11 does not list 86', async () => {
    const r = await call(relay, 'supportedmethods');
    assert.equal(r.status, 404);
    const doc = JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
    assert.equal(doc.supported_nips.includes(86), false);
  });
});
