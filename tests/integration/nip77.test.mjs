/*
 * nip77.test.mjs - negentropy sync (NIP-77) against nostr-tools' client.
 *
 * The client side is nostr-tools' Negentropy over its own storage vector,
 * driven over a raw websocket: NEG-OPEN with its initial message, then each
 * NEG-MSG answered until its reconcile() says it is done.  The ids it
 * reports as "have" (only the client holds) and "need" (only the relay
 * holds) must be exactly the symmetric difference of the two sets.
 *
 * The relay's sets are loaded with `relayctl import` (fast and unlimited);
 * the client's are made of some of those plus events the relay never saw.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
/* The package lists no "./nip77" export; the file is its own module. */
import { Negentropy, NegentropyStorageVector } from './node_modules/nostr-tools/lib/esm/nip77.js';
import { HOST, itStopsCleanly, relayctlInput, useRelay, until } from './lib/relay.mjs';
import { keypair, signed, now } from './lib/client.mjs';

const FRAME = 4096; /* neg_frame_bytes: the smallest, so a few hundred ids take several rounds */

/* Stores events through relayctl import. */
async function load(relay, events) {
  if (!events.length) return;
  const r = await relayctlInput(relay, ['import'], events.map((e) => JSON.stringify(e)).join('\n') + '\n');
  assert.equal(r.code, 0, r.stderr);
}

/* The NIP-11 document. */
function nip11(relay) {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: HOST, port: relay.port, path: '/', agent: false, timeout: 5000,
      headers: { Accept: 'application/nostr+json' } }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
  });
}

async function authenticate(relay, c, kp) {
  await until(() => c.challenge !== null, { timeout: 3000, what: 'a challenge' });
  const ev = signed(kp.sk, { kind: 22242, tags: [['relay', relay.url], ['challenge', c.challenge]] });
  c.send(['AUTH', ev]);
  assert.equal((await c.okFor(ev.id)).ok, true);
}

/* Sorted copies for comparison. */
const sorted = (a) => [...a].sort();

/* Runs a whole reconciliation of items ([{created_at, id}]) against filter;
 * resolves {have, need, rounds, frames} or the NEG-ERR frame as {err}. */
async function sync(c, filter, items, subid = 'neg') {
  const storage = new NegentropyStorageVector();
  for (const e of items) storage.insert(e.created_at, e.id);
  storage.seal();
  const neg = new Negentropy(storage, 60000);
  const have = [], need = [];
  let msg = neg.initiate(), rounds = 0, biggest = 0;
  c.send(['NEG-OPEN', subid, filter, msg]);
  for (;;) {
    const f = await c.waitFor((m) => Array.isArray(m) && m[1] === subid &&
      (m[0] === 'NEG-MSG' || m[0] === 'NEG-ERR'), { what: `NEG-MSG for ${subid}`, timeout: 15000 });
    if (f[0] === 'NEG-ERR') return { err: f };
    rounds++;
    biggest = Math.max(biggest, f[2].length / 2);
    msg = neg.reconcile(f[2], (id) => have.push(id), (id) => need.push(id));
    if (msg === null) break;
    c.send(['NEG-MSG', subid, msg]);
  }
  c.send(['NEG-CLOSE', subid]);
  return { have: sorted(have), need: sorted(need), rounds, biggest };
}

/* n signed events by sk at created_at t (ties) or t - i. */
function events(sk, n, { t = now() - 100, tie = false, kind = 1 } = {}) {
  const out = [];
  for (let i = 0; i < n; i++)
    out.push(signed(sk, { kind, created_at: tie ? t : t - i, content: `e${i}-${Math.random()}` }));
  return out;
}

describe('NIP-77 negentropy', () => {
  const relay = useRelay({
    config: { neg_frame_bytes: FRAME, neg_sessions_per_conn: 2, neg_max_records: 2000 },
  });

  it('lists 77 in NIP-11 supported_nips', async () => {
    const doc = await nip11(relay);
    assert.ok(doc.supported_nips.includes(77), JSON.stringify(doc.supported_nips));
  });

  it('finds the symmetric difference: events missing on each side', async () => {
    const { sk, pk } = keypair();
    const all = events(sk, 60);
    const relayOnly = all.slice(0, 10), clientOnly = all.slice(10, 25), both = all.slice(25);
    await load(relay, [...relayOnly, ...both]);
    const c = await relay.connect();
    const r = await sync(c, { authors: [pk] }, [...clientOnly, ...both]);
    assert.equal(r.err, undefined, JSON.stringify(r.err));
    assert.deepEqual(r.have, sorted(clientOnly.map((e) => e.id)));
    assert.deepEqual(r.need, sorted(relayOnly.map((e) => e.id)));
  });

  it('ties on created_at are told apart by id', async () => {
    const { sk, pk } = keypair();
    const all = events(sk, 300, { tie: true });
    const relayOnly = all.filter((_, i) => i % 7 === 0), clientOnly = all.filter((_, i) => i % 7 === 3);
    const both = all.filter((e) => !relayOnly.includes(e) && !clientOnly.includes(e));
    await load(relay, [...relayOnly, ...both]);
    const c = await relay.connect();
    const r = await sync(c, { authors: [pk] }, [...clientOnly, ...both]);
    assert.deepEqual(r.have, sorted(clientOnly.map((e) => e.id)));
    assert.deepEqual(r.need, sorted(relayOnly.map((e) => e.id)));
  });

  it('empty sets on either side or both', async () => {
    const { sk, pk } = keypair();
    const mine = events(sk, 40);
    const c = await relay.connect();
    const none = await sync(c, { authors: [pk] }, []);
    assert.deepEqual([none.have, none.need], [[], []]);
    const up = await sync(c, { authors: [pk] }, mine);
    assert.deepEqual([up.have, up.need], [sorted(mine.map((e) => e.id)), []]);
    await load(relay, mine);
    const down = await sync(c, { authors: [pk] }, []);
    assert.deepEqual([down.have, down.need], [[], sorted(mine.map((e) => e.id))]);
    const same = await sync(c, { authors: [pk] }, mine);
    assert.deepEqual([same.have, same.need, same.rounds], [[], [], 1]);
  });

  it('more differences than one frame holds take several rounds, each frame within the limit', async () => {
    const { sk, pk } = keypair();
    const all = events(sk, 900);
    const relayOnly = all.filter((_, i) => i % 2 === 0), clientOnly = all.filter((_, i) => i % 2 === 1);
    await load(relay, relayOnly);
    const c = await relay.connect();
    const r = await sync(c, { authors: [pk] }, clientOnly);
    assert.deepEqual(r.need, sorted(relayOnly.map((e) => e.id)));
    assert.deepEqual(r.have, sorted(clientOnly.map((e) => e.id)));
    assert.ok(r.rounds > 2, `rounds ${r.rounds}`);
    assert.ok(r.biggest <= FRAME, `a frame of ${r.biggest} bytes`);
  });

  it('sees what a REQ sees: deleted and expired events are not in the set', async () => {
    const { sk, pk } = keypair();
    const t = now();
    const kept = signed(sk, { created_at: t - 20, content: 'kept' });
    const doomed = signed(sk, { created_at: t - 19, content: 'deleted' });
    const c = await relay.connect();
    await c.mustPublish(kept);
    await c.mustPublish(doomed);
    const del = await c.mustPublish(signed(sk, { kind: 5, created_at: t - 1, tags: [['e', doomed.id]] }));
    const expiring = await c.mustPublish(signed(sk, { created_at: t - 18, tags: [['expiration', String(t + 2)]] }));
    await until(() => now() > t + 2, { timeout: 10000, what: 'the expiration to pass' });
    const r = await sync(c, { authors: [pk] }, []);
    assert.deepEqual(r.need, sorted([kept.id, del.id]));
    assert.ok(!r.need.includes(expiring.id));
  });

  it('NEG-MSG for no session, malformed messages and bad filters get NEG-ERR', async () => {
    const c = await relay.connect();
    c.send(['NEG-MSG', 'nosuch', '61']);
    const e1 = await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 'nosuch');
    assert.match(e1[2], /^closed: /);
    c.send(['NEG-OPEN', 'bad1', {}, '61zz']);
    assert.match((await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 'bad1'))[2], /^invalid: /);
    c.send(['NEG-OPEN', 'bad2', { kinds: 'x' }, '61']);
    assert.match((await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 'bad2'))[2], /^invalid: /);
    c.send(['NEG-OPEN', 'bad3', {}, '6103']); /* a bound cut short */
    assert.match((await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 'bad3'))[2], /^invalid: /);
    c.send(['NEG-OPEN', 'big', {}, '61' + '00'.repeat(FRAME)]);
    assert.match((await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 'big'))[2], /^blocked: /);
  });

  it('another protocol version is answered with the one byte 0x61', async () => {
    const c = await relay.connect();
    c.send(['NEG-OPEN', 'v2', { kinds: [1] }, '62']);
    const f = await c.waitFor((m) => m[1] === 'v2');
    assert.deepEqual(f, ['NEG-MSG', 'v2', '61']);
  });

  it('a filter matching more than neg_max_records is blocked', async () => {
    const { sk, pk } = keypair();
    await load(relay, events(sk, 2001));
    const c = await relay.connect();
    const r = await sync(c, { authors: [pk] }, []);
    assert.equal(r.err[0], 'NEG-ERR');
    assert.match(r.err[2], /^blocked: /);
    const limited = await sync(c, { authors: [pk], limit: 5 }, []);
    assert.equal(limited.need.length, 5);
  });

  it('a connection may hold neg_sessions_per_conn sessions; NEG-CLOSE frees one', async () => {
    const { pk } = keypair();
    const c = await relay.connect();
    for (const id of ['s1', 's2']) {
      c.send(['NEG-OPEN', id, { authors: [pk] }, '61']);
      await c.waitFor((m) => m[0] === 'NEG-MSG' && m[1] === id);
    }
    c.send(['NEG-OPEN', 's3', { authors: [pk] }, '61']);
    assert.match((await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 's3'))[2], /^blocked: /);
    c.send(['NEG-CLOSE', 's1']);
    c.send(['NEG-OPEN', 's3', { authors: [pk] }, '61']);
    assert.equal((await c.waitFor((m) => m[1] === 's3'))[0], 'NEG-MSG');
    /* Re-opening an open id replaces it rather than counting twice. */
    c.send(['NEG-OPEN', 's2', { authors: [pk] }, '61']);
    assert.equal((await c.waitFor((m) => m[1] === 's2'))[0], 'NEG-MSG');
  });

  itStopsCleanly(relay);
});

describe('NIP-77 limits: idle sessions, the relay-wide bound, disabled', () => {
  const relay = useRelay({ config: { neg_idle_seconds: 1, neg_sessions_max: 2, private_kinds: '4', auth_challenge: 'connect' } });

  it('an idle session ends with NEG-ERR closed:', async () => {
    const c = await relay.connect();
    c.send(['NEG-OPEN', 'idle', { kinds: [1] }, '61']);
    await c.waitFor((m) => m[0] === 'NEG-MSG' && m[1] === 'idle');
    const e = await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 'idle', { timeout: 10000 });
    assert.match(e[2], /^closed: /);
    c.send(['NEG-MSG', 'idle', '61']);
    assert.match((await c.waitFor((m) => m[0] === 'NEG-ERR' && m[1] === 'idle'))[2], /^closed: /);
  });

  it('private kinds: only for their parties after AUTH', async () => {
    const alice = keypair(), bob = keypair();
    const dm = signed(alice.sk, { kind: 4, tags: [['p', bob.pk]], content: 'secret' });
    await load(relay, [dm]);
    const c = await relay.connect();
    const anon = await sync(c, { kinds: [4], authors: [alice.pk] }, [], 'anon');
    assert.match(anon.err[2], /^auth-required: /);
    const mixed = await sync(c, { authors: [alice.pk] }, [], 'mixed');
    assert.deepEqual(mixed.need, []);
    await authenticate(relay, c, bob);
    const r = await sync(c, { kinds: [4], authors: [alice.pk] }, [], 'bob');
    assert.deepEqual(r.need, [dm.id]);
  });

  it('past neg_sessions_max over all connections: blocked:; a closed connection frees its sessions', async () => {
    const a = await relay.connect(), b = await relay.connect();
    for (const [c, id] of [[a, 'a1'], [b, 'b1']]) {
      c.send(['NEG-OPEN', id, { kinds: [1] }, '61']);
      await c.waitFor((m) => m[0] === 'NEG-MSG' && m[1] === id);
    }
    const third = await relay.connect();
    third.send(['NEG-OPEN', 'c1', { kinds: [1] }, '61']);
    assert.match((await third.waitFor((m) => m[1] === 'c1'))[2], /^blocked: /);
    await a.end();
    await until(async () => {
      third.send(['NEG-OPEN', 'c2', { kinds: [1] }, '61']);
      const f = await third.waitFor((m) => m[1] === 'c2');
      return f[0] === 'NEG-MSG';
    }, { what: 'a slot freed by the closed connection' });
  });

  itStopsCleanly(relay);
});

describe('NIP-77 disabled', () => {
  const relay = useRelay({ config: { negentropy: 0 } });

  it('is not advertised and NEG-OPEN gets NEG-ERR blocked:', async () => {
    const doc = await nip11(relay);
    assert.ok(!doc.supported_nips.includes(77));
    const c = await relay.connect();
    c.send(['NEG-OPEN', 'x', {}, '61']);
    assert.match((await c.waitFor((m) => m[1] === 'x'))[2], /^blocked: /);
  });

  itStopsCleanly(relay);
});
