/*
 * nip09.test.mjs - deletion requests (NIP-09) against the running relay.
 *
 * A kind 5 deletes its author's own events: `e` tags by id (never a kind 5
 * or 62), `a` tags ("kind:pubkey:d") every version of that address up to
 * the request's created_at.  Deleted events leave REQ and COUNT, on every
 * worker; sending one again (or an older version of a deleted address) is
 * answered OK false "blocked: ..."; the deletion itself is kept, served and
 * delivered live; deleting a deletion and someone else's deletion change
 * nothing.
 *
 * "Not delivered" is shown with a sentinel: a matching event published
 * after the one that must not arrive; once the sentinel is in, the other
 * would have been too.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, signed, now, takeEventIds } from './lib/client.mjs';

const deletion = (sk, tags, created_at = now()) =>
  signed(sk, { kind: 5, tags, created_at, content: 'deleted by its author' });
const addr = (kind, pk, d) => `${kind}:${pk}:${d}`;

describe('NIP-09 deletion', () => {
  const relay = useRelay({ config: { private_kinds: '' } });

  /* ids a fresh REQ on c returns for filter */
  async function idsOf(c, filter) {
    const r = await c.req(`q${Math.random()}`, filter);
    assert.equal(r.closed, null, `REQ was closed: ${r.closed}`);
    return r.events.map((e) => e.id).sort();
  }

  async function countOf(c, filter) {
    const r = await c.count(`n${Math.random()}`, filter);
    assert.equal(r.closed, undefined, `COUNT was closed: ${r.closed}`);
    return r.count;
  }

  function assertBlocked(r, what) {
    assert.equal(r.ok, false, `${what}: ${JSON.stringify(r.frame)}`);
    assert.match(r.message, /^blocked: /, `${what}: ${JSON.stringify(r.frame)}`);
  }

  describe('e tags', () => {
    it('delete the author\'s event on every worker: gone from REQ and COUNT, the request kept', async () => {
      const { sk, pk } = keypair();
      const w1 = await relay.connectTo(1);
      const w2 = await relay.connectTo(2);
      const ev = await w1.mustPublish(signed(sk, { content: 'to be deleted', created_at: now() - 5 }));
      const keep = await w1.mustPublish(signed(sk, { content: 'to be kept', created_at: now() - 5 }));
      assert.equal(await countOf(w2, { ids: [ev.id] }), 1);
      const del = await w2.mustPublish(deletion(sk, [['e', ev.id], ['k', '1']]));
      for (const c of [w1, w2]) {
        assert.deepEqual(await idsOf(c, { ids: [ev.id] }), []);
        assert.deepEqual(await idsOf(c, { authors: [pk] }), [keep.id, del.id].sort());
        assert.equal(await countOf(c, { ids: [ev.id] }), 0);
        assert.equal(await countOf(c, { authors: [pk] }), 2);
      }
      /* the deletion request is served as it was sent */
      const r = await w1.req('del', { kinds: [5], authors: [pk] });
      assert.deepEqual(r.events, [del]);
    });

    it('several e tags delete several events; another author\'s named event stays', async () => {
      const alice = keypair();
      const bob = keypair();
      const c = await relay.connect();
      const a1 = await c.mustPublish(signed(alice.sk, { content: 'a1' }));
      const a2 = await c.mustPublish(signed(alice.sk, { content: 'a2' }));
      const a3 = await c.mustPublish(signed(alice.sk, { content: 'a3' }));
      const b1 = await c.mustPublish(signed(bob.sk, { content: 'b1' }));
      await c.mustPublish(deletion(alice.sk, [['e', a1.id], ['e', a3.id], ['e', b1.id]]));
      assert.deepEqual(await idsOf(c, { ids: [a1.id, a2.id, a3.id, b1.id] }), [a2.id, b1.id].sort());
    });

    it('every storage class is deleted by id', async () => {
      const { sk } = keypair();
      const c = await relay.connect();
      const evs = [
        await c.mustPublish(signed(sk, { kind: 0, content: '{}' })),
        await c.mustPublish(signed(sk, { kind: 10002, tags: [['r', 'wss://x.example']] })),
        await c.mustPublish(signed(sk, { kind: 30023, tags: [['d', 'art']], content: 'article' })),
        await c.mustPublish(signed(sk, { kind: 7, content: '+' })),
      ];
      await c.mustPublish(deletion(sk, evs.map((e) => ['e', e.id])));
      assert.deepEqual(await idsOf(c, { ids: evs.map((e) => e.id) }), []);
    });

    it('another author\'s kind 5 changes nothing (and blocks nothing)', async () => {
      const alice = keypair();
      const bob = keypair();
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(alice.sk, { content: 'mine' }));
      const later = signed(alice.sk, { content: 'not sent yet' });
      const bobs = await c.mustPublish(deletion(bob.sk, [['e', ev.id], ['e', later.id]]));
      assert.deepEqual(await idsOf(c, { ids: [ev.id] }), [ev.id]);
      assert.equal((await c.publish(later)).ok, true, 'an event named by someone else\'s deletion is accepted');
      assert.deepEqual(await idsOf(c, { ids: [later.id] }), [later.id]);
      /* the stranger's request is still an ordinary stored event */
      assert.deepEqual(await idsOf(c, { ids: [bobs.id] }), [bobs.id]);
    });

    it('a deleted event sent again is refused with blocked:, on either worker', async () => {
      const { sk } = keypair();
      const w1 = await relay.connectTo(1);
      const w2 = await relay.connectTo(2);
      const ev = await w1.mustPublish(signed(sk, { content: 'once' }));
      await w1.mustPublish(deletion(sk, [['e', ev.id]]));
      assertBlocked(await w1.publish(ev), 'same worker');
      assertBlocked(await w2.publish(ev), 'other worker');
      assert.deepEqual(await idsOf(w2, { ids: [ev.id] }), []);
    });

    it('an event deleted before it arrives is refused when it does', async () => {
      const { sk } = keypair();
      const c = await relay.connect();
      const ev = signed(sk, { content: 'deleted in advance', created_at: now() - 10 });
      await c.mustPublish(deletion(sk, [['e', ev.id]]));
      assertBlocked(await c.publish(ev), 'named before it arrived');
      assert.deepEqual(await idsOf(c, { ids: [ev.id] }), []);
    });

    it('deleting a deletion does nothing', async () => {
      const { sk } = keypair();
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(sk, { content: 'x', created_at: now() - 10 }));
      const del1 = await c.mustPublish(deletion(sk, [['e', ev.id]], now() - 5));
      const del2 = await c.mustPublish(deletion(sk, [['e', del1.id]]));
      assert.deepEqual(await idsOf(c, { kinds: [5], ids: [del1.id, del2.id] }), [del1.id, del2.id].sort());
      /* the first deletion still holds */
      assertBlocked(await c.publish(ev), 'still deleted');
      /* the surviving deletion sent again is a duplicate, not blocked */
      const again = await c.publish(del1);
      assert.equal(again.ok, true, JSON.stringify(again.frame));
      assert.match(again.message, /^duplicate:/);
    });

    it('a deletion named before it arrives is still stored and still applies', async () => {
      const { sk } = keypair();
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(sk, { content: 'y', created_at: now() - 10 }));
      const del1 = deletion(sk, [['e', ev.id]], now() - 5);
      await c.mustPublish(deletion(sk, [['e', del1.id]]));
      assert.equal((await c.publish(del1)).ok, true);
      assert.deepEqual(await idsOf(c, { ids: [ev.id, del1.id] }), [del1.id]);
    });

    it('malformed e values (uppercase, short, long, not hex) delete nothing', async () => {
      const { sk } = keypair();
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(sk, { content: 'z' }));
      const r = await c.publish(deletion(sk, [
        ['e', ev.id.toUpperCase()], ['e', ev.id.slice(0, 63)], ['e', ev.id + '0'],
        ['e', 'x'.repeat(64)], ['e'],
      ]));
      /* the relay may refuse such a request or store it; either way ev stays */
      assert.equal(typeof r.ok, 'boolean');
      assert.deepEqual(await idsOf(c, { ids: [ev.id] }), [ev.id]);
    });
  });

  describe('a tags', () => {
    it('delete every version up to the request\'s created_at; older versions stay refused', async () => {
      const { sk, pk } = keypair();
      const w1 = await relay.connectTo(1);
      const w2 = await relay.connectTo(2);
      const t = now();
      const v1 = await w1.mustPublish(signed(sk, { kind: 30023, created_at: t - 30, tags: [['d', 'post']], content: 'v1' }));
      const other = await w1.mustPublish(signed(sk, { kind: 30023, created_at: t - 30, tags: [['d', 'other']] }));
      await w2.mustPublish(deletion(sk, [['a', addr(30023, pk, 'post')]], t - 20));
      for (const c of [w1, w2]) {
        assert.deepEqual(await idsOf(c, { kinds: [30023], authors: [pk] }), [other.id]);
        assert.equal(await countOf(c, { kinds: [30023], authors: [pk], '#d': ['post'] }), 0);
      }
      assertBlocked(await w1.publish(v1), 'the deleted version again');
      assertBlocked(await w1.publish(signed(sk, { kind: 30023, created_at: t - 25, tags: [['d', 'post']] })), 'an older version');
      assertBlocked(await w2.publish(signed(sk, { kind: 30023, created_at: t - 20, tags: [['d', 'post']] })), 'a version as old as the request');
      const v2 = await w2.mustPublish(signed(sk, { kind: 30023, created_at: t - 10, tags: [['d', 'post']], content: 'v2' }));
      assert.deepEqual(await idsOf(w1, { kinds: [30023], authors: [pk], '#d': ['post'] }), [v2.id]);
    });

    it('a version newer than the request survives it', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const t = now();
      const v = await c.mustPublish(signed(sk, { kind: 30023, created_at: t - 5, tags: [['d', 'keep']] }));
      await c.mustPublish(deletion(sk, [['a', addr(30023, pk, 'keep')]], t - 10));
      assert.deepEqual(await idsOf(c, { ids: [v.id] }), [v.id]);
    });

    it('only the named address: other d values and kinds stay; d may be empty or hold colons', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const t = now() - 10;
      const mk = (kind, tags) => c.mustPublish(signed(sk, { kind, created_at: t, tags }));
      const noD = await mk(30023, []);
      const colon = await mk(30023, [['d', 'a:b']]);
      const a = await mk(30023, [['d', 'a']]);
      const otherKind = await mk(30024, [['d', 'a:b']]);
      await c.mustPublish(deletion(sk, [['a', addr(30023, pk, '')], ['a', addr(30023, pk, 'a:b')]]));
      assert.deepEqual(await idsOf(c, { authors: [pk], kinds: [30023, 30024] }), [a.id, otherKind.id].sort());
      assert.ok(noD && colon);
    });

    it('a replaceable event is deleted by "kind:pubkey:"', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const t = now();
      const list = await c.mustPublish(signed(sk, { kind: 10000, created_at: t - 10, tags: [['p', pk]] }));
      await c.mustPublish(deletion(sk, [['a', addr(10000, pk, '')]], t - 5));
      assert.deepEqual(await idsOf(c, { ids: [list.id] }), []);
      assertBlocked(await c.publish(signed(sk, { kind: 10000, created_at: t - 8 })), 'older replaceable');
      await c.mustPublish(signed(sk, { kind: 10000, created_at: t - 1 }));
    });

    it('another author\'s a tag changes nothing', async () => {
      const alice = keypair();
      const bob = keypair();
      const c = await relay.connect();
      const t = now();
      const v = await c.mustPublish(signed(alice.sk, { kind: 30023, created_at: t - 10, tags: [['d', 'mine']] }));
      await c.mustPublish(deletion(bob.sk, [['a', addr(30023, alice.pk, 'mine')]], t - 5));
      assert.deepEqual(await idsOf(c, { ids: [v.id] }), [v.id]);
      /* and Alice's next version, older than Bob's request, is accepted */
      await c.mustPublish(signed(alice.sk, { kind: 30023, created_at: t - 7, tags: [['d', 'mine']] }));
    });

    it('malformed coordinates delete nothing', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const t = now();
      const v = await c.mustPublish(signed(sk, { kind: 30023, created_at: t - 10, tags: [['d', 'p']] }));
      const bad = [
        `30023:${pk.toUpperCase()}:p`, `30023:${pk.slice(0, 63)}:p`, `30023:${pk}0:p`,
        `x:${pk}:p`, `:${pk}:p`, `+30023:${pk}:p`, `70000:${pk}:p`, `30023:${pk}`, '30023',
      ];
      const r = await c.publish(deletion(sk, bad.map((a) => ['a', a]), t - 5));
      assert.equal(typeof r.ok, 'boolean');
      assert.deepEqual(await idsOf(c, { ids: [v.id] }), [v.id]);
    });
  });

  describe('live', () => {
    it('the deletion is delivered live; a refused copy of the deleted event is not', async () => {
      const { sk, pk } = keypair();
      const sub = await relay.connectTo(1);
      const pub = await relay.connectTo(2);
      const ev = await pub.mustPublish(signed(sk, { content: 'will go', created_at: now() - 5 }));
      assert.deepEqual((await sub.req('live', { authors: [pk] })).events, [ev]);
      const del = await pub.mustPublish(deletion(sk, [['e', ev.id]]));
      assert.deepEqual(await sub.liveEvent('live', del.id), del);
      assert.equal((await pub.publish(ev)).ok, false);
      const sentinel = await pub.mustPublish(signed(sk, { content: 'sentinel' }));
      await sub.liveEvent('live', sentinel.id);
      assert.deepEqual(takeEventIds(sub, 'live'), [], 'nothing else was delivered');
    });

    it('a new subscription no longer gets the deleted event in its history', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(sk, { content: 'history' }));
      await c.mustPublish(deletion(sk, [['e', ev.id]]));
      const r = await c.req('h', { authors: [pk], kinds: [1] });
      assert.deepEqual(r.events, []);
    });
  });

  itStopsCleanly(relay);
});
