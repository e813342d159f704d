/*
 * nip01-kinds.test.mjs - what the kind of an event means for storage and
 * broadcast (NIP-01): regular, replaceable (0, 3, 10000-19999), ephemeral
 * (20000-29999) and addressable (30000-39999, keyed by the first d tag).
 * Newest created_at wins, ties go to the lowest id, and an older version
 * arriving later is "OK true duplicate:", neither stored nor broadcast.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const T0 = 1700000000;

/* kind -> what two versions from one author (same d tag) leave stored */
const CLASSES = [
  [1, 'regular'], [2, 'regular'], [4, 'regular'], [9999, 'regular'], [40000, 'regular'],
  [0, 'replaceable'], [3, 'replaceable'], [10000, 'replaceable'], [19999, 'replaceable'],
  [20000, 'ephemeral'], [29999, 'ephemeral'],
  [30000, 'addressable'], [39999, 'addressable'],
];
const REPLACING = CLASSES.filter(([, c]) => c === 'replaceable' || c === 'addressable');

/* Stored events of one author, newest first (limit makes the order
 * mandatory), as ids. */
async function storedIds(conn, pk, kinds) {
  const r = await conn.req('stored', { authors: [pk], kinds, limit: 50 });
  assert.equal(r.eose, true, `REQ refused: ${r.closed}`);
  return r.events.map((e) => e.id);
}

/* Two events from sk with the same created_at, returned as [lowId, highId]. */
function tiePair(sk, template) {
  const a = signed(sk, { ...template, content: 'tie a' });
  const b = signed(sk, { ...template, content: 'tie b' });
  return a.id < b.id ? [a, b] : [b, a];
}

describe('NIP-01 kinds', () => {
  const relay = useRelay({ config: { private_kinds: '' } });

  describe('two versions (same author, same d tag) published oldest first', () => {
    for (const [kind, cls] of CLASSES) {
      it(`kind ${kind} is ${cls}`, async () => {
        const { sk, pk } = keypair();
        const old = signed(sk, { kind, created_at: T0, tags: [['d', 'x']], content: 'old' });
        const neu = signed(sk, { kind, created_at: T0 + 10, tags: [['d', 'x']], content: 'new' });
        const a = await relay.connectTo(1);
        const b = await relay.connectTo(2);
        for (const [conn, ev] of [[a, old], [b, neu]]) {
          const r = await conn.publish(ev);
          assert.equal(r.ok, true, JSON.stringify(r.frame));
          assert.doesNotMatch(r.message, /^duplicate:/, 'a newer version is not a duplicate');
        }
        const expected = {
          regular: [neu.id, old.id],
          replaceable: [neu.id],
          addressable: [neu.id],
          ephemeral: [],
        }[cls];
        assert.deepEqual(await storedIds(a, pk, [kind]), expected);
        const byId = await a.req('by-id', { ids: [old.id, neu.id], limit: 50 });
        assert.deepEqual(byId.events.map((e) => e.id), expected, 'ids filter sees the same');
      });
    }
  });

  describe('an older version arriving after a newer one is "duplicate:" and not stored', () => {
    for (const [kind, cls] of REPLACING) {
      it(`kind ${kind} (${cls})`, async () => {
        const { sk, pk } = keypair();
        const neu = signed(sk, { kind, created_at: T0 + 10, tags: [['d', 'x']], content: 'new' });
        const old = signed(sk, { kind, created_at: T0, tags: [['d', 'x']], content: 'old' });
        const c = await relay.connect();
        assert.equal((await c.publish(neu)).ok, true);
        const r = await c.publish(old);
        assert.equal(r.ok, true, JSON.stringify(r.frame));
        assert.match(r.message, /^duplicate: ?\S/);
        assert.deepEqual(await storedIds(c, pk, [kind]), [neu.id]);
      });
    }
  });

  describe('ties on created_at keep the lowest id', () => {
    for (const [kind, cls] of REPLACING) {
      it(`kind ${kind} (${cls}), higher id first: the lower id replaces it`, async () => {
        const { sk, pk } = keypair();
        const [low, high] = tiePair(sk, { kind, created_at: T0, tags: [['d', 't']] });
        const c = await relay.connect();
        assert.equal((await c.publish(high)).ok, true);
        const r = await c.publish(low);
        assert.equal(r.ok, true, JSON.stringify(r.frame));
        assert.doesNotMatch(r.message, /^duplicate:/);
        assert.deepEqual(await storedIds(c, pk, [kind]), [low.id]);
      });

      it(`kind ${kind} (${cls}), lower id first: the higher id is a duplicate`, async () => {
        const { sk, pk } = keypair();
        const [low, high] = tiePair(sk, { kind, created_at: T0, tags: [['d', 't']] });
        const c = await relay.connect();
        assert.equal((await c.publish(low)).ok, true);
        const r = await c.publish(high);
        assert.equal(r.ok, true, JSON.stringify(r.frame));
        assert.match(r.message, /^duplicate: ?\S/);
        assert.deepEqual(await storedIds(c, pk, [kind]), [low.id]);
      });
    }
  });

  describe('what a replaceable or addressable slot is keyed by', () => {
    it('replaceable: one per (pubkey, kind); other authors and kinds keep theirs', async () => {
      const alice = keypair();
      const bob = keypair();
      const c = await relay.connect();
      const a0 = await c.mustPublish(signed(alice.sk, { kind: 0, created_at: T0 }));
      const b0 = await c.mustPublish(signed(bob.sk, { kind: 0, created_at: T0 + 5 }));
      const a3 = await c.mustPublish(signed(alice.sk, { kind: 3, created_at: T0 + 6 }));
      assert.deepEqual(await storedIds(c, alice.pk, [0, 3]), [a3.id, a0.id]);
      assert.deepEqual(await storedIds(c, bob.pk, [0, 3]), [b0.id]);
    });

    /* [name, tags of each version in publish order (created_at rising),
     *  indexes of the versions left stored, newest first] */
    const ADDRESS_CASES = [
      ['different d values coexist', [[['d', 'a']], [['d', 'b']]], [1, 0]],
      ['d values are case sensitive', [[['d', 'a']], [['d', 'A']]], [1, 0]],
      ['no d tag is the same address as d ""', [[], [['d', '']]], [1]],
      ['d "" is the same address as no d tag', [[['d', '']], []], [1]],
      ['only the first d tag counts', [[['d', 'x'], ['d', 'y']], [['d', 'y']], [['d', 'x']]], [2, 1]],
      ['other tags do not matter', [[['d', 'k'], ['t', 'one']], [['t', 'two'], ['d', 'k']]], [1]],
      /* A first d tag without a value is the address "", not "no d tag"
       * (which would let the next d tag name it). */
      ['a first d tag without a value is d ""', [[['d'], ['d', 'x']], []], [1]],
      ['a first d tag without a value is not the next one\'s address', [[['d', 'x']], [['d'], ['d', 'x']]], [1, 0]],
    ];
    for (const [name, versions, kept] of ADDRESS_CASES) {
      it(`addressable: ${name}`, async () => {
        const { sk, pk } = keypair();
        const c = await relay.connect();
        const evs = [];
        for (const [i, tags] of versions.entries()) {
          evs.push(await c.mustPublish(signed(sk, { kind: 30023, created_at: T0 + i, tags, content: `v${i}` })));
        }
        assert.deepEqual(await storedIds(c, pk, [30023]), kept.map((i) => evs[i].id));
      });
    }

    it('addressable: same d under another kind or another author is another address', async () => {
      const alice = keypair();
      const bob = keypair();
      const c = await relay.connect();
      const e1 = await c.mustPublish(signed(alice.sk, { kind: 30000, created_at: T0, tags: [['d', 'same']] }));
      const e2 = await c.mustPublish(signed(alice.sk, { kind: 30001, created_at: T0 + 1, tags: [['d', 'same']] }));
      const e3 = await c.mustPublish(signed(bob.sk, { kind: 30000, created_at: T0 + 2, tags: [['d', 'same']] }));
      assert.deepEqual(await storedIds(c, alice.pk, [30000, 30001]), [e2.id, e1.id]);
      assert.deepEqual(await storedIds(c, bob.pk, [30000]), [e3.id]);
    });
  });

  describe('broadcast follows the same rules', () => {
    /* A subscriber on worker 2 follows the author; versions are published on
     * worker 1; a final kind-1 sentinel marks the end of the broadcasts. */
    async function broadcastsOf(publishes) {
      const { sk, pk } = keypair();
      const sub = await relay.connectTo(2);
      const pub = await relay.connectTo(1);
      const r = await sub.req('follow', { authors: [pk] });
      assert.deepEqual(r, { events: [], eose: true, closed: null });
      const evs = publishes(sk);
      for (const ev of evs) assert.equal((await pub.publish(ev)).ok, true);
      const sentinel = await pub.mustPublish(signed(sk, { kind: 1, content: 'sentinel' }));
      await sub.liveEvent('follow', sentinel.id);
      return {
        evs,
        got: sub.take((m) => m[0] === 'EVENT' && m[1] === 'follow').map((m) => m[2].id),
      };
    }

    it('a newer replaceable version is broadcast, an older one arriving later is not', async () => {
      const { evs, got } = await broadcastsOf((sk) => [
        signed(sk, { kind: 0, created_at: T0 + 10, content: 'newer' }),
        signed(sk, { kind: 0, created_at: T0, content: 'older, late' }),
        signed(sk, { kind: 0, created_at: T0 + 20, content: 'newest' }),
      ]);
      assert.deepEqual(got, [evs[0].id, evs[2].id]);
    });

    it('an older addressable version arriving later is not broadcast', async () => {
      const { evs, got } = await broadcastsOf((sk) => [
        signed(sk, { kind: 30000, created_at: T0 + 10, tags: [['d', 'q']] }),
        signed(sk, { kind: 30000, created_at: T0, tags: [['d', 'q']] }),
        signed(sk, { kind: 30000, created_at: T0, tags: [['d', 'other']] }),
      ]);
      assert.deepEqual(got, [evs[0].id, evs[2].id]);
    });

    it('a tie loser arriving later is not broadcast', async () => {
      const { evs, got } = await broadcastsOf((sk) => tiePair(sk, { kind: 10002, created_at: T0 }));
      assert.deepEqual(got, [evs[0].id]);
    });

    it('a duplicate is not broadcast again', async () => {
      const { evs, got } = await broadcastsOf((sk) => {
        const ev = signed(sk, { kind: 1, content: 'once' });
        return [ev, ev];
      });
      assert.deepEqual(got, [evs[0].id]);
    });

    it('ephemeral events are broadcast and never stored', async () => {
      const { evs, got } = await broadcastsOf((sk) => [
        signed(sk, { kind: 20000, content: 'eph low' }),
        signed(sk, { kind: 29999, content: 'eph high' }),
      ]);
      assert.deepEqual(got, evs.map((e) => e.id));
      const c = await relay.connect();
      const r = await c.req('eph', { ids: evs.map((e) => e.id) });
      assert.deepEqual(r.events, []);
    });

    it('an ephemeral event sent again is answered duplicate: and relayed once', async () => {
      const { sk, pk } = keypair();
      const sub = await relay.connectTo(2);
      assert.equal((await sub.req('eph2', { authors: [pk] })).eose, true);
      const eph = signed(sk, { kind: 20001, content: 'once' });
      const first = await relay.connectTo(1);
      const again = await relay.connectTo(2);
      const once = await first.publish(eph);
      assert.equal(once.ok, true);
      assert.equal(once.message, '');
      const second = await again.publish(eph);
      assert.equal(second.ok, true);
      assert.match(second.message, /^duplicate: /);
      const sentinel = await first.mustPublish(signed(sk, { kind: 1, content: 'after the ephemeral' }));
      await sub.liveEvent('eph2', sentinel.id);
      assert.deepEqual(sub.take((m) => m[0] === 'EVENT' && m[1] === 'eph2').map((m) => m[2].id), [eph.id]);
    });
  });

  itStopsCleanly(relay);
});
