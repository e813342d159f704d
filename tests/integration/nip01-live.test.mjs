/*
 * nip01-live.test.mjs - live delivery after EOSE (NIP-01): within a worker
 * and across workers, only to matching filters, once per subscription, never
 * after CLOSE or disconnect, and ephemeral events delivered but not stored.
 *
 * "Not delivered" is shown with a sentinel: a matching event published after
 * the one that must not arrive, through the same path; once the sentinel is
 * in, anything sent before it would be too.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay, sleep } from './lib/relay.mjs';
import { keypair, signed, broken, now } from './lib/client.mjs';

/* EVENT frames for subid still in c's inbox, as event ids. */
function pending(c, subid) {
  return c.take((m) => m[0] === 'EVENT' && m[1] === subid).map((m) => m[2].id);
}

describe('NIP-01 live events', () => {
  const relay = useRelay();

  describe('an event published on one worker reaches a subscriber on any worker', () => {
    /* [publisher's worker, subscriber's worker] */
    const ROUTES = [[1, 1], [2, 2], [1, 2], [2, 1]];
    for (const [from, to] of ROUTES) {
      it(`worker ${from} -> worker ${to}`, async () => {
        const { sk, pk } = keypair();
        const sub = await relay.connectTo(to);
        const pub = await relay.connectTo(from);
        assert.deepEqual(await sub.req('live', { authors: [pk] }), { events: [], eose: true, closed: null });
        const ev = await pub.mustPublish(signed(sk, { content: `from ${from} to ${to}` }));
        assert.deepEqual(await sub.liveEvent('live', ev.id), ev);
      });
    }
  });

  it('stored events come before EOSE, live ones after', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const old = await c.mustPublish(signed(sk, { content: 'stored', created_at: now() - 10 }));
    c.send(['REQ', 'order', { authors: [pk] }]);
    const frames = [];
    for (let i = 0; i < 2; i++) frames.push(await c.waitFor((m) => m[1] === 'order'));
    assert.deepEqual(frames, [['EVENT', 'order', old], ['EOSE', 'order']]);
    const neu = await (await relay.connect()).mustPublish(signed(sk, { content: 'live' }));
    assert.deepEqual(await c.waitFor((m) => m[1] === 'order'), ['EVENT', 'order', neu]);
  });

  /* relayd frames outgoing messages itself (relayd/wsframe.c): the three
   * length encodings must all reach the client intact, in order, whether
   * they leave one per write or several in one. */
  it('small, 16-bit and 64-bit length frames arrive intact, live and stored', async () => {
    const { sk, pk } = keypair();
    const sub = await relay.connect();
    assert.equal((await sub.req('sizes', { authors: [pk] })).eose, true);
    const pub = await relay.connect();
    const sizes = [1, 200, 65000, 65536];
    const sent = [];
    for (const [i, n] of sizes.entries())
      sent.push(await pub.mustPublish(signed(sk, { content: 'z'.repeat(n), created_at: now() - 10 + i })));
    for (const ev of sent) assert.deepEqual(await sub.liveEvent('sizes', ev.id), ev);
    const history = await (await relay.connect()).req('back', { authors: [pk] });
    assert.equal(history.eose, true);
    assert.deepEqual(history.events, [...sent].reverse());
  });

  it('the publisher\'s own subscription receives its event', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    assert.equal((await c.req('mine', { authors: [pk] })).eose, true);
    const ev = await c.mustPublish(signed(sk, { content: 'to myself' }));
    assert.deepEqual(await c.liveEvent('mine', ev.id), ev);
  });

  describe('live events are matched against the filters', () => {
    const t = now();
    /* [name, filter for author pk, templates that must not be delivered,
     *  template of the matching sentinel] */
    const CASES = [
      ['kinds', (pk) => ({ authors: [pk], kinds: [1] }), [{ kind: 2 }, { kind: 10001 }], { kind: 1 }],
      ['#t first value only', (pk) => ({ authors: [pk], '#t': ['x'] }),
        [{ tags: [['t', 'y']] }, { tags: [['t', 'y', 'x']] }, { tags: [['T', 'x']] }, { tags: [] }],
        { tags: [['t', 'x']] }],
      ['since', (pk) => ({ authors: [pk], since: t - 100 }), [{ created_at: t - 101 }], { created_at: t - 100 }],
      ['until', (pk) => ({ authors: [pk], until: t - 100 }), [{ created_at: t - 99 }, { created_at: t }], { created_at: t - 100 }],
      ['two filters, neither matching', (pk) => [{ authors: [pk], kinds: [7] }, { authors: [pk], '#p': ['0'.repeat(64)] }],
        [{ kind: 1 }, { kind: 8, tags: [['p', '1'.repeat(64)]] }], { kind: 7 }],
    ];
    for (const [name, filter, misses, hit] of CASES) {
      it(name, async () => {
        const { sk, pk } = keypair();
        const sub = await relay.connectTo(2);
        const pub = await relay.connectTo(1);
        const f = filter(pk);
        assert.equal((await sub.req('m', ...(Array.isArray(f) ? f : [f]))).eose, true);
        for (const tpl of misses) await pub.mustPublish(signed(sk, { content: 'miss', ...tpl }));
        const sentinel = await pub.mustPublish(signed(sk, { content: 'hit', ...hit }));
        await sub.liveEvent('m', sentinel.id);
        assert.deepEqual(pending(sub, 'm'), []);
      });
    }

    it('an event matching two filters of one subscription is sent once', async () => {
      const { sk, pk } = keypair();
      const sub = await relay.connectTo(1);
      const pub = await relay.connectTo(2);
      assert.equal((await sub.req('both', { authors: [pk] }, { kinds: [1], authors: [pk] })).eose, true);
      const ev = await pub.mustPublish(signed(sk, { kind: 1, content: 'twice?' }));
      const sentinel = await pub.mustPublish(signed(sk, { kind: 2, content: 'sentinel' }));
      await sub.liveEvent('both', sentinel.id);
      assert.deepEqual(pending(sub, 'both'), [ev.id]);
    });

    it('two matching subscriptions on one connection each get it', async () => {
      const { sk, pk } = keypair();
      const sub = await relay.connectTo(2);
      assert.equal((await sub.req('one', { authors: [pk] })).eose, true);
      assert.equal((await sub.req('two', { kinds: [1], authors: [pk] })).eose, true);
      const ev = await (await relay.connectTo(1)).mustPublish(signed(sk, { content: 'fan-out' }));
      assert.deepEqual(await sub.liveEvent('one', ev.id), ev);
      assert.deepEqual(await sub.liveEvent('two', ev.id), ev);
    });

    it('an invalid event is not delivered', async () => {
      const { sk, pk } = keypair();
      const sub = await relay.connectTo(2);
      const pub = await relay.connectTo(1);
      assert.equal((await sub.req('v', { authors: [pk] })).eose, true);
      const bad = broken.badSig(signed(sk, { content: 'forged' }));
      assert.equal((await pub.publish(bad)).ok, false);
      const sentinel = await pub.mustPublish(signed(sk, { content: 'sentinel' }));
      await sub.liveEvent('v', sentinel.id);
      assert.deepEqual(pending(sub, 'v'), []);
    });
  });

  describe('no delivery after the subscription ends', () => {
    it('after CLOSE (subscriber on the other worker)', async () => {
      const { sk, pk } = keypair();
      const other = keypair();
      const sub = await relay.connectTo(2);
      const pub = await relay.connectTo(1);
      assert.equal((await sub.req('closed', { authors: [pk] })).eose, true);
      assert.equal((await sub.req('open', { authors: [other.pk] })).eose, true);
      sub.closeSub('closed');
      assert.equal((await sub.req('sync', { ids: ['0'.repeat(64)] })).eose, true);
      await pub.mustPublish(signed(sk, { content: 'after close' }));
      const sentinel = await pub.mustPublish(signed(other.sk, { content: 'sentinel' }));
      await sub.liveEvent('open', sentinel.id);
      await sleep(100);
      assert.deepEqual(sub.take(), [], 'nothing for the closed subscription');
    });

    it('after the subscriber disconnects, others on its worker still receive', async () => {
      const { sk, pk } = keypair();
      const gone = await relay.connectTo(2);
      const stays = await relay.connectTo(2);
      assert.equal((await gone.req('g', { authors: [pk] })).eose, true);
      assert.equal((await stays.req('s', { authors: [pk] })).eose, true);
      await gone.end();
      await sleep(100);
      const pub = await relay.connectTo(1);
      for (let i = 0; i < 3; i++) {
        const ev = await pub.mustPublish(signed(sk, { content: `after disconnect ${i}` }));
        await stays.liveEvent('s', ev.id);
      }
    });
  });

  describe('ephemeral events', () => {
    for (const kind of [20000, 25000, 29999]) {
      it(`kind ${kind} is delivered live on both workers and not stored`, async () => {
        const { sk, pk } = keypair();
        const subs = [await relay.connectTo(1), await relay.connectTo(2)];
        for (const s of subs) assert.equal((await s.req('eph', { authors: [pk] })).eose, true);
        const pub = await relay.connect();
        const ev = signed(sk, { kind, content: 'ephemeral' });
        const r = await pub.publish(ev);
        assert.equal(r.ok, true, JSON.stringify(r.frame));
        for (const s of subs) assert.deepEqual(await s.liveEvent('eph', ev.id), ev);
        for (const s of subs) {
          const later = await s.req('later', { ids: [ev.id] }, { authors: [pk] });
          assert.deepEqual(later.events, [], `worker ${s.worker} returned a stored ephemeral event`);
        }
      });
    }
  });

  it('a burst of 50 events from worker 1 all reach a subscriber on worker 2', async () => {
    const { sk, pk } = keypair();
    const sub = await relay.connectTo(2);
    const pub = await relay.connectTo(1);
    assert.equal((await sub.req('burst', { authors: [pk] })).eose, true);
    const evs = Array.from({ length: 50 }, (_, i) => signed(sk, { content: `burst ${i}` }));
    for (const ev of evs) pub.send(['EVENT', ev]);
    for (const ev of evs) assert.equal((await pub.okFor(ev.id)).ok, true);
    const got = [];
    for (const ev of evs) got.push((await sub.liveEvent('burst', ev.id)).id);
    assert.equal(new Set(got).size, 50);
    await sleep(100);
    assert.deepEqual(pending(sub, 'burst'), [], 'no event delivered twice');
  });

  it('subscriptions opened while events commit get each of them once, stored or live', async () => {
    /* The broadcaster hears of a commit while its sync still runs, and a
     * subscription registered then reads its history up to that commit:
     * the read has to wait for the commit to be readable, or the events
     * are neither in the history nor live. */
    const { sk, pk } = keypair();
    const pub = await relay.connectTo(1);
    const subs = [await relay.connectTo(1), await relay.connectTo(2)];
    const evs = Array.from({ length: 300 }, (_, i) =>
      signed(sk, { content: `stream ${i}`, created_at: now() - 300 + i }));
    const publishing = (async () => {
      for (let i = 0; i < evs.length; i += 4) {
        const chunk = evs.slice(i, i + 4);
        for (const ev of chunk) pub.send(['EVENT', ev]);
        for (const ev of chunk) assert.equal((await pub.okFor(ev.id)).ok, true);
      }
    })();
    const opened = [];
    for (let n = 0; n < 40; n++) {
      const c = subs[n % 2];
      c.send(['REQ', `s${n}`, { authors: [pk] }]);
      opened.push({ c, subid: `s${n}`, ids: [] });
      await sleep(2);
    }
    await publishing;
    const all = new Set(evs.map((ev) => ev.id));
    for (const o of opened) {
      const deadline = Date.now() + 5000;
      while (new Set(o.ids).size < all.size && Date.now() < deadline) {
        o.ids.push(...pending(o.c, o.subid));
        await sleep(20);
      }
      await sleep(50);
      o.ids.push(...pending(o.c, o.subid));
      const missing = [...all].filter((id) => !o.ids.includes(id));
      assert.deepEqual(missing.length, 0, `${o.subid} never got ${missing.length} events`);
      assert.equal(o.ids.length, all.size, `${o.subid} got an event twice`);
    }
  });

  itStopsCleanly(relay);
});
