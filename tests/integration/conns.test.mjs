/*
 * conns.test.mjs - relayctl conns and relayctl kick over two workers.
 *
 * Each client connects with its own X-Forwarded-For (the relay trusts
 * loopback), so the listing must show the address the relay knows the
 * client by, not the peer's 127.0.0.1.  One client publishes, one
 * authenticates with NIP-42, one holds two subscriptions: the listing
 * shows each on its worker with its exact message counts, subscriptions
 * and pubkey.  kick closes exactly the connection named, with a websocket
 * Close the client sees; an unknown id is an error (exit 1), a malformed
 * one bad usage (exit 2).  A stopped worker (SIGSTOP) is named as not
 * answering while the other's connections are still listed and kicked.
 *
 * Counts are exact because every frame is awaited: the relay writes a
 * connection's AUTH challenge, then one frame per answer.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { useRelay, itStopsCleanly, until, PAUSABLE } from './lib/relay.mjs';
import { Client, keypair, signed, now } from './lib/client.mjs';

const OPEN_TIMEOUT_MS = 5000;
const KICK_CODE = 1008;
const KICK_REASON = "closed by the relay's operator";

/* A websocket claiming to be from address (X-Forwarded-For); resolves a
 * Client with .worker set from X-Relay-Worker. */
function openAs(url, address) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { 'X-Forwarded-For': address },
      handshakeTimeout: OPEN_TIMEOUT_MS });
    let worker = null;
    ws.once('upgrade', (res) => { worker = Number(res.headers['x-relay-worker']); });
    ws.once('open', () => resolve(new Client(ws, worker)));
    ws.once('error', (err) => reject(new Error(`connect as ${address}: ${err.message}`)));
  });
}

/* A client as address on worker n; the others opened on the way are closed. */
async function openOn(relay, n, address) {
  for (let i = 0; i < 64; i++) {
    const c = await openAs(relay.url, address);
    if (c.worker === n) {
      relay.clients.add(c); /* closed after the test */
      return c;
    }
    await c.end();
  }
  throw new Error(`no connection as ${address} landed on worker ${n}`);
}

async function challengeOf(c) {
  await until(() => c.challenge !== null, { timeout: 5000, what: 'an AUTH challenge' });
  return c.challenge;
}

async function ctlJson(relay, ...args) {
  const r = await relay.relayctl('--json', ...args);
  assert.equal(r.code, 0, `relayctl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/* The listed connection of address, asserted to be listed once. */
function byAddress(reply, address) {
  const hits = reply.conn_list.filter((c) => c.address === address);
  assert.equal(hits.length, 1, `${address} in ${JSON.stringify(reply.conn_list)}`);
  return hits[0];
}

describe('relayctl conns and kick', () => {
  /* A generous wait for the workers' answers: a busy machine may be slow. */
  const relay = useRelay({ workers: 2,
    config: { ...PAUSABLE, real_ip_header: 'X-Forwarded-For', conns_timeout_ms: 5000,
      auth_challenge: 'connect' } });

  it('lists every client with its worker, real address, counts, subscriptions and pubkey', async () => {
    const start = now();
    const writer = await openOn(relay, 1, '203.0.113.1');
    const authed = await openOn(relay, 2, '203.0.113.2');
    const reader = await openOn(relay, 2, '2001:db8::3');
    const kp = keypair();

    await writer.mustPublish(signed(kp.sk, { content: 'conns' }));
    const challenge = await challengeOf(authed);
    const auth = signed(kp.sk, { kind: 22242, tags: [['relay', relay.url], ['challenge', challenge]] });
    authed.send(['AUTH', auth]);
    assert.equal((await authed.okFor(auth.id)).ok, true);
    const nobody = keypair().pk;
    assert.equal((await reader.req('s1', { authors: [nobody] })).eose, true);
    assert.equal((await reader.req('s2', { authors: [nobody], kinds: [7] })).eose, true);

    const reply = await ctlJson(relay, 'conns');
    assert.deepEqual(reply.unanswered, []);
    assert.equal(reply.truncated, false);
    assert.ok(reply.total >= 3 && reply.listed === reply.total, JSON.stringify(reply));
    const w = byAddress(reply, '203.0.113.1');
    const a = byAddress(reply, '203.0.113.2');
    const r = byAddress(reply, '2001:db8::3');
    /* in: EVENT / AUTH / two REQs; out: the challenge, then OK / OK / two EOSEs */
    assert.deepEqual([w.worker, w.messages_in, w.messages_out, w.subscriptions, w.pubkeys],
      [1, 1, 2, 0, []]);
    assert.deepEqual([a.worker, a.messages_in, a.messages_out, a.subscriptions, a.pubkeys],
      [2, 1, 2, 0, [kp.pk]]);
    assert.deepEqual([r.worker, r.messages_in, r.messages_out, r.subscriptions, r.pubkeys],
      [2, 2, 3, 2, []]);
    for (const c of [w, a, r]) {
      assert.ok(c.since >= start - 1 && c.since <= now() + 1, `since ${c.since}`);
      assert.match(c.conn_id, /^[1-9][0-9]*$/, 'a decimal string: ids pass 2^53');
    }
    const ids = reply.conn_list.map((c) => `${c.worker}/${c.conn_id}`);
    assert.equal(new Set(ids).size, ids.length, 'one entry per connection');

    const text = await relay.relayctl('conns');
    assert.equal(text.code, 0, text.stderr);
    const line = text.stdout.split('\n').find((l) => l.includes(' 203.0.113.2 '));
    assert.match(line, new RegExp(`^worker 2  conn ${a.conn_id}  203\\.0\\.113\\.2  since \\S+ \\S+  in 1  out 2  subs 0  pubkey ${kp.pk}$`));
    assert.match(text.stdout, new RegExp(`^${reply.total} connections$`, 'm'));
  });

  it('conns MAX lists at most MAX and says the list is truncated', async () => {
    await openOn(relay, 1, '203.0.113.11');
    await openOn(relay, 2, '203.0.113.12');
    const reply = await ctlJson(relay, 'conns', '1');
    assert.equal(reply.listed, 1);
    assert.equal(reply.conn_list.length, 1);
    assert.equal(reply.truncated, true);
    assert.ok(reply.total >= 2);
    const text = await relay.relayctl('conns', '1');
    assert.match(text.stdout, /^\d+ connections \(truncated: 1 listed\)$/m);
    assert.equal((await relay.relayctl('conns', 'many')).code, 2);
  });

  it('kick closes exactly the connection named, with a Close the client sees', async () => {
    const target = await openOn(relay, 1, '203.0.113.21');
    const bystander = await openOn(relay, 1, '203.0.113.22');
    const other = await openOn(relay, 2, '203.0.113.23');
    const before = await ctlJson(relay, 'conns');
    const id = byAddress(before, '203.0.113.21').conn_id;

    const kicked = await ctlJson(relay, 'kick', id);
    assert.deepEqual([kicked.conn_id, kicked.kicked, kicked.unanswered], [id, [1], []]);
    assert.deepEqual(await target.waitClosed(), { code: KICK_CODE, reason: KICK_REASON });
    for (const c of [bystander, other]) {
      assert.equal(c.isOpen, true);
      assert.equal((await c.req('alive', { limit: 1 })).eose, true);
    }
    const after = await ctlJson(relay, 'conns');
    assert.equal(after.conn_list.filter((c) => c.address === '203.0.113.21').length, 0);
    byAddress(after, '203.0.113.22');
    byAddress(after, '203.0.113.23');

    /* The readable form, with a reason of several words. */
    const id2 = byAddress(after, '203.0.113.23').conn_id;
    const text = await relay.relayctl('kick', id2, 'too', 'many', 'REQs');
    assert.equal(text.code, 0, text.stderr);
    assert.equal(text.stdout, `closed connection ${id2} on worker 2\n`);
    assert.deepEqual(await other.waitClosed(), { code: KICK_CODE, reason: 'too many REQs' });
  });

  it('kicking an unknown connection is an error; a malformed id is bad usage', async () => {
    const unknown = await relay.relayctl('kick', '12345');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no open connection 12345/);
    assert.equal((await relay.relayctl('--json', 'kick', '12345')).code, 1);
    /* Ids pass 2^53: every digit goes through. */
    const big = await relay.relayctl('kick', '18446744073709551615');
    assert.equal(big.code, 1);
    assert.match(big.stderr, /no open connection 18446744073709551615/);
    for (const bad of ['abc', '0', '-3', '+3', '1x', '18446744073709551616'])
      assert.equal((await relay.relayctl('kick', bad)).code, 2, `kick ${bad}`);
    assert.equal((await relay.relayctl('kick')).code, 2);
  });

  it('names a worker that does not answer and lists the other', async () => {
    const c = await openOn(relay, 1, '203.0.113.31');
    const id = byAddress(await ctlJson(relay, 'conns'), '203.0.113.31').conn_id;
    await relay.kill(2, 'SIGSTOP');
    try {
      const text = await relay.relayctl('conns');
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /^worker 2 did not answer$/m);
      assert.match(text.stdout, new RegExp(`^worker 1  conn ${id}  203\\.0\\.113\\.31  `, 'm'));
      assert.ok(!/^worker 2  conn /m.test(text.stdout), text.stdout);
      const kicked = await ctlJson(relay, 'kick', id);
      assert.deepEqual([kicked.kicked, kicked.unanswered], [[1], [2]]);
      await c.waitClosed();
    } finally {
      await relay.kill(2, 'SIGCONT');
    }
    /* Its late answers are dropped; it answers the next questions. */
    await until(async () => (await ctlJson(relay, 'conns')).unanswered.length === 0,
      { timeout: 30000, what: 'worker 2 to answer again' });
  });

  itStopsCleanly(relay);
});
