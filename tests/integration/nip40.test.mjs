/*
 * nip40.test.mjs - event expiration (NIP-40) against the running relay.
 *
 * An event whose "expiration" tag is in the past (or now; 0 and negative
 * values included) is refused with
 * OK false "invalid: this event has expired" and never delivered.  An event
 * that expires later is stored and served until then, and from the second
 * it expires it is neither returned by REQ nor counted by COUNT, on any
 * worker, although it is still on disk: the first relay runs its disk job
 * only hourly (expire_interval = 3600), so what hides the event there is
 * the query-time check.  The second relay (expire_interval = 1) shows the
 * periodic job removing expired events from disk (relayctl stats "events"
 * counts the rows).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay, sleep } from './lib/relay.mjs';
import { keypair, signed, now, takeEventIds } from './lib/client.mjs';

const EXPIRED = 'invalid: this event has expired';

const expiring = (sk, expiration, extra = {}) =>
  signed(sk, { content: `expires at ${expiration}`, ...extra, tags: [['expiration', String(expiration)], ...(extra.tags ?? [])] });

/* Waits until the wall clock is past second t (plus a margin). */
async function passSecond(t) {
  const wait = t * 1000 + 100 - Date.now();
  if (wait > 0) await sleep(wait);
}

async function storedEvents(relay) {
  const r = await relay.relayctl('stats', '--json');
  assert.equal(r.code, 0, `relayctl stats --json: ${r.stderr}`);
  return JSON.parse(r.stdout).events;
}

describe('NIP-40 expiration, checked at query and delivery time', () => {
  const relay = useRelay({ config: { expire_interval: 3600, private_kinds: '' } });

  it('an event that has expired is refused on arrival and not stored', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    /* 0 and negative are moments long past too, not "no expiration". */
    for (const exp of [now() - 3600, now() - 1, now(), 1, 0, -5]) {
      const ev = expiring(sk, exp);
      const r = await c.publish(ev);
      assert.deepEqual([r.ok, r.message], [false, EXPIRED], `expiration ${exp}: ${JSON.stringify(r.frame)}`);
    }
    assert.deepEqual((await c.req('x', { authors: [pk] })).events, []);
    assert.equal((await c.count('n', { authors: [pk] })).count, 0);
  });

  it('an expired event of any class is refused (replaceable, addressable, ephemeral, deletion)', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    for (const kind of [0, 10002, 30023, 20001, 5]) {
      const r = await c.publish(expiring(sk, now() - 10, { kind, tags: kind === 30023 ? [['d', 'x']] : [] }));
      assert.deepEqual([r.ok, r.message], [false, EXPIRED], `kind ${kind}`);
    }
  });

  it('an already expired event is not delivered live; one that expires later is', async () => {
    const { sk, pk } = keypair();
    const sub = await relay.connectTo(1);
    const pub = await relay.connectTo(2);
    assert.equal((await sub.req('live', { authors: [pk] })).eose, true);
    assert.equal((await pub.publish(expiring(sk, now() - 5))).ok, false);
    assert.equal((await pub.publish(expiring(sk, now() - 5, { kind: 20001 }))).ok, false);
    const later = await pub.mustPublish(expiring(sk, now() + 600));
    assert.deepEqual(await sub.liveEvent('live', later.id), later);
    assert.deepEqual(takeEventIds(sub, 'live'), [], 'only the unexpired event was delivered');
  });

  it('from the second it expires an event is neither served nor counted, though still on disk', async () => {
    const { sk, pk } = keypair();
    const w1 = await relay.connectTo(1);
    const w2 = await relay.connectTo(2);
    const exp = now() + 2;
    const ev = await w1.mustPublish(expiring(sk, exp));
    const keep = await w1.mustPublish(signed(sk, { content: 'no expiration' }));
    const far = await w1.mustPublish(expiring(sk, now() + 3600));
    const all = [ev.id, keep.id, far.id].sort();
    for (const c of [w1, w2]) {
      assert.deepEqual((await c.req('before', { authors: [pk] })).events.map((e) => e.id).sort(), all);
      assert.equal((await c.count('n1', { authors: [pk] })).count, 3);
    }
    const onDisk = await storedEvents(relay);
    await passSecond(exp);
    for (const c of [w1, w2]) {
      assert.deepEqual((await c.req('after', { authors: [pk] })).events.map((e) => e.id).sort(),
        [keep.id, far.id].sort());
      assert.deepEqual((await c.req('byid', { ids: [ev.id] })).events, []);
      assert.equal((await c.count('n2', { authors: [pk] })).count, 2);
      assert.equal((await c.count('n3', { ids: [ev.id] })).count, 0);
    }
    /* the hourly job has not run: the row is still there, only hidden */
    assert.equal(await storedEvents(relay), onDisk);
  });

  it('an expired replaceable version no longer wins: an older one arriving after is stored and served', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const exp = now() + 2;
    const newer = await c.mustPublish(expiring(sk, exp, { kind: 0, created_at: now() }));
    const older = signed(sk, { kind: 0, created_at: now() - 60, content: '{"name":"older"}' });
    const early = await c.publish(older);
    assert.deepEqual([early.ok, early.message.split(':')[0]], [true, 'duplicate'], 'refused while the newer one is live');
    assert.deepEqual((await c.req('a', { authors: [pk], kinds: [0] })).events.map((e) => e.id), [newer.id]);
    await passSecond(exp);
    const late = await c.publish(older);
    assert.deepEqual([late.ok, late.message], [true, ''], JSON.stringify(late.frame));
    assert.deepEqual((await c.req('b', { authors: [pk], kinds: [0] })).events.map((e) => e.id), [older.id]);
  });

  itStopsCleanly(relay);
});

describe('NIP-40 expiration, the periodic job (expire_interval = 1)', () => {
  const relay = useRelay({ config: { expire_interval: 1 } });

  it('removes expired events from disk within a few seconds and keeps the others', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const base = await storedEvents(relay);
    const exp = now() + 2;
    for (let i = 0; i < 3; i++) await c.mustPublish(expiring(sk, exp, { content: `gone ${i}` }));
    const keep = await c.mustPublish(signed(sk, { content: 'stays' }));
    assert.equal(await storedEvents(relay), base + 4);
    await passSecond(exp);
    const deadline = Date.now() + 5000;
    let n;
    while ((n = await storedEvents(relay)) !== base + 1 && Date.now() < deadline) await sleep(200);
    assert.equal(n, base + 1, 'the three expired rows were removed from disk');
    assert.deepEqual((await c.req('x', { authors: [pk] })).events, [keep]);
  });

  itStopsCleanly(relay);
});
