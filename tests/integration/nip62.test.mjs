/*
 * nip62.test.mjs - requests to vanish (NIP-62) against the running relay.
 *
 * A kind 62 whose `relay` tag names this relay (its relay_url, by default
 * ws://<bind>:<port>, compared lowercase without a trailing slash) or
 * ALL_RELAYS deletes every event of its author with created_at up to the
 * request's (deletions included) and the gift wraps (kind 1059) p-tagged to
 * the author, on every worker and from COUNT too; those events are refused
 * afterwards with OK false "blocked: ..."; later events are accepted.  The
 * kind 62 itself is stored, and a kind 5 against it does nothing.  A kind
 * 62 naming only another relay is just stored.
 *
 * The second relay has relay_url configured, so the default URL is no
 * longer its name.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, signed, now, takeEventIds } from './lib/client.mjs';

const vanish = (sk, relays, created_at = now()) =>
  signed(sk, { kind: 62, created_at, tags: relays.map((r) => ['relay', r]), content: 'forget me' });

function assertBlocked(r, what) {
  assert.equal(r.ok, false, `${what}: ${JSON.stringify(r.frame)}`);
  assert.match(r.message, /^blocked: /, `${what}: ${JSON.stringify(r.frame)}`);
}

async function idsOf(c, ...filters) {
  const r = await c.req(`q${Math.random()}`, ...filters);
  assert.equal(r.closed, null, `REQ was closed: ${r.closed}`);
  return r.events.map((e) => e.id).sort();
}

/* Alice's history before a request to vanish at t, and the events around it. */
async function populate(c, alice, bob, carol, t) {
  const mine = [
    await c.mustPublish(signed(alice.sk, { created_at: t - 50, content: 'a note' })),
    await c.mustPublish(signed(alice.sk, { kind: 0, created_at: t - 40, content: '{"name":"alice"}' })),
    await c.mustPublish(signed(alice.sk, { kind: 30023, created_at: t - 40, tags: [['d', 'post']], content: 'article' })),
    await c.mustPublish(signed(alice.sk, { kind: 7, created_at: t, content: '+' })), /* created_at == request's */
  ];
  const delTarget = await c.mustPublish(signed(alice.sk, { created_at: t - 60, content: 'deleted earlier' }));
  mine.push(await c.mustPublish(signed(alice.sk, { kind: 5, created_at: t - 30, tags: [['e', delTarget.id]] })));
  const wrapToAlice = await c.mustPublish(signed(carol.sk, { kind: 1059, created_at: t - 20, tags: [['p', alice.pk]], content: 'sealed' }));
  const kept = [
    await c.mustPublish(signed(alice.sk, { created_at: t + 1, content: 'after the request' })),
    await c.mustPublish(signed(bob.sk, { created_at: t - 50, content: 'bob stays', tags: [['p', alice.pk]] })),
    await c.mustPublish(signed(carol.sk, { kind: 1059, created_at: t - 20, tags: [['p', bob.pk]], content: 'to bob' })),
    await c.mustPublish(signed(carol.sk, { kind: 1059, created_at: t + 1, tags: [['p', alice.pk]], content: 'later wrap' })),
  ];
  return { gone: [...mine, wrapToAlice], kept };
}

describe('NIP-62 request to vanish', () => {
  const relay = useRelay({ config: { private_kinds: '' } });

  it('naming this relay deletes everything of the author up to created_at, on every worker and from COUNT', async () => {
    const [alice, bob, carol] = [keypair(), keypair(), keypair()];
    const w1 = await relay.connectTo(1);
    const w2 = await relay.connectTo(2);
    const t = now() - 100;
    const { gone, kept } = await populate(w1, alice, bob, carol, t);
    const everyone = { authors: [alice.pk, bob.pk, carol.pk] };
    assert.equal((await w2.count('before', everyone)).count, gone.length + kept.length);
    const req = await w2.mustPublish(vanish(alice.sk, [relay.url], t));
    for (const c of [w1, w2]) {
      assert.deepEqual(await idsOf(c, everyone), [...kept.map((e) => e.id), req.id].sort());
      assert.deepEqual(await idsOf(c, { ids: gone.map((e) => e.id) }), []);
      assert.equal((await c.count('after', everyone)).count, kept.length + 1);
      assert.equal((await c.count('wraps', { kinds: [1059], '#p': [alice.pk] })).count, 1);
    }
    /* the request itself is served as sent */
    assert.deepEqual((await w1.req('v', { kinds: [62], authors: [alice.pk] })).events, [req]);
  });

  it('afterwards the author\'s older events and gift wraps to them are refused; newer ones are accepted', async () => {
    const [alice, bob, carol] = [keypair(), keypair(), keypair()];
    const w1 = await relay.connectTo(1);
    const w2 = await relay.connectTo(2);
    const t = now() - 100;
    const old = await w1.mustPublish(signed(alice.sk, { created_at: t - 10, content: 'old' }));
    await w1.mustPublish(vanish(alice.sk, ['ALL_RELAYS'], t));
    for (const c of [w1, w2]) {
      assertBlocked(await c.publish(old), 'the vanished event again');
      assertBlocked(await c.publish(signed(alice.sk, { created_at: t - 5, content: `older ${c.worker}` })), 'an older event');
      assertBlocked(await c.publish(signed(alice.sk, { created_at: t, content: `same second ${c.worker}` })), 'created_at == request');
      assertBlocked(await c.publish(signed(alice.sk, { kind: 5, created_at: t - 1, tags: [['e', old.id]] })), 'an older deletion');
      assertBlocked(await c.publish(signed(alice.sk, { kind: 30023, created_at: t - 1, tags: [['d', `x${c.worker}`]] })), 'an older addressable');
      assertBlocked(await c.publish(signed(carol.sk, { kind: 1059, created_at: t - 1, tags: [['p', alice.pk]], content: `wrap ${c.worker}` })), 'an older gift wrap to the author');
    }
    const newer = await w2.mustPublish(signed(alice.sk, { created_at: t + 1, content: 'new start' }));
    await w2.mustPublish(signed(carol.sk, { kind: 1059, created_at: t + 1, tags: [['p', alice.pk]] }));
    await w2.mustPublish(signed(bob.sk, { created_at: t - 10, content: 'bob is unaffected' }));
    await w2.mustPublish(signed(carol.sk, { kind: 1, created_at: t - 10, tags: [['p', alice.pk]], content: 'a note mentioning alice' }));
    assert.deepEqual(await idsOf(w1, { authors: [alice.pk], kinds: [1] }), [newer.id]);
  });

  /* [what, relay tag values, whether the request names this relay] */
  const NAMES = [
    ['the relay URL', (r) => [r.url], true],
    ['the URL with a trailing slash', (r) => [r.url + '/'], true],
    ['the URL in uppercase', (r) => [r.url.toUpperCase()], true],
    ['ALL_RELAYS', () => ['ALL_RELAYS'], true],
    ['another relay, then this one', (r) => ['wss://elsewhere.example', r.url], true],
    ['another relay only', () => ['wss://elsewhere.example'], false],
    ['wss:// instead of ws://', (r) => [r.url.replace('ws://', 'wss://')], false],
    ['another port', (r) => [`ws://127.0.0.1:${r.port + 1}`], false],
    ['the URL with a path', (r) => [r.url + '/path'], false],
    ['all_relays in lowercase', () => ['all_relays'], false],
    ['no relay tag', () => [], false],
  ];
  for (const [what, tags, here] of NAMES) {
    it(`relay tag naming ${what}: ${here ? 'vanishes' : 'is only stored'}`, async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const t = now() - 10;
      const ev = await c.mustPublish(signed(sk, { created_at: t - 1, content: 'maybe gone' }));
      const req = await c.mustPublish(vanish(sk, tags(relay), t));
      assert.deepEqual(await idsOf(c, { authors: [pk] }), here ? [req.id] : [ev.id, req.id].sort());
      const r = await c.publish(signed(sk, { created_at: t - 2, content: 'older, sent after' }));
      assert.equal(r.ok, !here, JSON.stringify(r.frame));
    });
  }

  it('a kind 5 against the request to vanish does nothing', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const t = now() - 10;
    const old = signed(sk, { created_at: t - 5, content: 'vanished' });
    await c.mustPublish(old);
    const req = await c.mustPublish(vanish(sk, ['ALL_RELAYS'], t));
    await c.mustPublish(signed(sk, { kind: 5, tags: [['e', req.id]] }));
    assert.deepEqual(await idsOf(c, { kinds: [62], authors: [pk] }), [req.id]);
    assertBlocked(await c.publish(old), 'still vanished');
    /* the request sent again is a duplicate */
    const again = await c.publish(req);
    assert.equal(again.ok, true, JSON.stringify(again.frame));
    /* an elsewhere-request named by a deletion before it arrives is stored too */
    const other = vanish(sk, ['wss://elsewhere.example']);
    await c.mustPublish(signed(sk, { kind: 5, tags: [['e', other.id]] }));
    assert.equal((await c.publish(other)).ok, true);
  });

  it('another author\'s request takes nothing of ours', async () => {
    const alice = keypair();
    const mallory = keypair();
    const c = await relay.connect();
    const ev = await c.mustPublish(signed(alice.sk, { created_at: now() - 10, content: 'mine' }));
    await c.mustPublish(signed(mallory.sk, { kind: 62, tags: [['relay', 'ALL_RELAYS'], ['p', alice.pk]] }));
    assert.deepEqual(await idsOf(c, { ids: [ev.id] }), [ev.id]);
  });

  it('a refused event is not delivered live', async () => {
    const { sk, pk } = keypair();
    const sub = await relay.connectTo(1);
    const pub = await relay.connectTo(2);
    const t = now() - 10;
    await pub.mustPublish(vanish(sk, ['ALL_RELAYS'], t));
    assert.equal((await sub.req('live', { authors: [pk] })).eose, true);
    sub.take();
    assert.equal((await pub.publish(signed(sk, { created_at: t - 1, content: 'blocked' }))).ok, false);
    const sentinel = await pub.mustPublish(signed(sk, { created_at: t + 1, content: 'sentinel' }));
    await sub.liveEvent('live', sentinel.id);
    assert.deepEqual(takeEventIds(sub, 'live'), []);
  });

  itStopsCleanly(relay);
});

describe('NIP-62 with relay_url configured', () => {
  const URL = 'wss://Vanish.Example/relay/';
  const relay = useRelay({ config: { relay_url: URL } });

  it('the configured URL names the relay (lowercase, no trailing slash)', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const t = now() - 10;
    await c.mustPublish(signed(sk, { created_at: t - 1, content: 'gone' }));
    const req = await c.mustPublish(vanish(sk, ['wss://vanish.example/relay'], t));
    assert.deepEqual(await idsOf(c, { authors: [pk] }), [req.id]);
  });

  it('the address the relay listens on is then no name of it', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const t = now() - 10;
    const ev = await c.mustPublish(signed(sk, { created_at: t - 1, content: 'stays' }));
    const req = await c.mustPublish(vanish(sk, [relay.url], t));
    assert.deepEqual(await idsOf(c, { authors: [pk] }), [ev.id, req.id].sort());
  });

  itStopsCleanly(relay);
});
