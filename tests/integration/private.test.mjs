/*
 * private.test.mjs - kinds readable only by their parties (private_kinds =
 * 4,1059): a direct message reaches only connections authenticated (NIP-42)
 * as its author or as a p-tagged recipient, in stored history and live; a
 * COUNT that could count them is refused; a REQ for private kinds only
 * before AUTH is answered CLOSED auth-required:; a subscription opened
 * before AUTH shows the authenticated pubkey's private events that arrive
 * after it; other kinds are unaffected.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay, until } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

async function authenticate(relay, c, kp) {
  await until(() => c.challenge !== null, { timeout: 3000, what: 'a challenge' });
  const ev = signed(kp.sk, { kind: 22242, tags: [['relay', relay.url], ['challenge', c.challenge]] });
  c.send(['AUTH', ev]);
  assert.equal((await c.okFor(ev.id)).ok, true);
}

describe('private kinds', () => {
  const relay = useRelay({ workers: 2, config: { private_kinds: '4,1059', auth_challenge: 'connect' } });
  const alice = keypair();
  const bob = keypair();
  const eve = keypair();

  it('history: only the author and the recipient see a direct message', async () => {
    const pub = await relay.connect();
    const dm = signed(alice.sk, { kind: 4, tags: [['p', bob.pk]], content: 'ciphertext' });
    const note = signed(alice.sk, { kind: 1, content: 'public' });
    assert.equal((await pub.publish(dm)).ok, true);
    assert.equal((await pub.publish(note)).ok, true);

    const anon = await relay.connect();
    let r = await anon.req('a', { authors: [alice.pk] });
    assert.deepEqual(r.events.map((e) => e.id), [note.id], 'an anonymous client saw the DM');
    const asEve = await relay.connect();
    await authenticate(relay, asEve, eve);
    r = await asEve.req('e', { kinds: [4] });
    assert.deepEqual(r.events, [], 'a third party saw the DM');
    for (const [kp, what] of [[bob, 'recipient'], [alice, 'author']]) {
      const c = await relay.connect();
      await authenticate(relay, c, kp);
      r = await c.req('d', { kinds: [4], authors: [alice.pk] });
      assert.deepEqual(r.events.map((e) => e.id), [dm.id], `the ${what} did not see the DM`);
    }
  });

  it('live: a new direct message reaches its recipient only', async () => {
    const bobConn = await relay.connectTo(2);
    await authenticate(relay, bobConn, bob);
    const eveConn = await relay.connectTo(2);
    await authenticate(relay, eveConn, eve);
    const anon = await relay.connectTo(1);
    for (const c of [bobConn, eveConn, anon]) assert.equal((await c.req('live', { limit: 0 })).eose, true);
    const pub = await relay.connectTo(1);
    const dm = signed(alice.sk, { kind: 4, tags: [['p', bob.pk]], content: 'live ciphertext' });
    const note = signed(alice.sk, { kind: 1, content: 'live public' });
    assert.equal((await pub.publish(dm)).ok, true);
    assert.equal((await pub.publish(note)).ok, true);
    await bobConn.liveEvent('live', dm.id);
    for (const c of [eveConn, anon]) {
      await c.liveEvent('live', note.id);
      assert.equal(c.take((f) => f[0] === 'EVENT' && f[2].id === dm.id).length, 0, 'a DM leaked live');
    }
  });

  it('a REQ for private kinds only, before AUTH, is CLOSED auth-required:; after AUTH it is served', async () => {
    const pub = await relay.connect();
    const dm = signed(alice.sk, { kind: 1059, tags: [['p', bob.pk]], content: 'wrapped' });
    assert.equal((await pub.publish(dm)).ok, true);
    const c = await relay.connect();
    const r = await c.req('dms', { kinds: [4, 1059], '#p': [bob.pk] });
    assert.equal(r.eose, false);
    assert.match(r.closed ?? '', /^auth-required: /);
    /* a filter that also reaches public kinds is served, the private ones hidden */
    const mixed = await c.req('mixed', { kinds: [1059] }, { kinds: [1], authors: [alice.pk] });
    assert.equal(mixed.closed, null);
    assert.ok(!mixed.events.some((e) => e.id === dm.id), 'a private event leaked');
    await authenticate(relay, c, bob);
    const again = await c.req('dms', { kinds: [4, 1059], '#p': [bob.pk] });
    assert.equal(again.closed, null);
    assert.ok(again.events.some((e) => e.id === dm.id), 'the recipient did not get the gift wrap');
  });

  it('a subscription opened before AUTH shows the private events of the AUTH pubkey that arrive after it, not before', async () => {
    const dan = keypair();
    const pub = await relay.connectTo(1);
    const before = signed(dan.sk, { kind: 4, tags: [['p', bob.pk]], content: 'sent before the AUTH' });
    assert.equal((await pub.publish(before)).ok, true);
    const c = await relay.connectTo(2);
    const other = await relay.connectTo(2); /* opens the same REQ, never authenticates as bob */
    await authenticate(relay, other, eve);
    for (const conn of [c, other]) {
      const r = await conn.req('mixed', { kinds: [4] }, { kinds: [1], authors: [dan.pk] });
      assert.equal(r.closed, null);
      assert.ok(!r.events.some((e) => e.id === before.id), 'a private event leaked');
    }
    await authenticate(relay, c, bob);
    const dm = signed(dan.sk, { kind: 4, tags: [['p', bob.pk]], content: 'sent after the AUTH' });
    const toEve = signed(dan.sk, { kind: 4, tags: [['p', eve.pk]], content: 'for eve' });
    const note = signed(dan.sk, { kind: 1, content: 'after the AUTH, public' });
    for (const ev of [dm, toEve, note]) assert.equal((await pub.publish(ev)).ok, true);
    await c.liveEvent('mixed', dm.id);
    await c.liveEvent('mixed', note.id);
    await other.liveEvent('mixed', toEve.id);
    await other.liveEvent('mixed', note.id);
    assert.equal(c.take((f) => f[0] === 'EVENT' && f[2].id === toEve.id).length, 0, "eve's DM reached bob");
    assert.equal(other.take((f) => f[0] === 'EVENT' && f[2].id === dm.id).length, 0, "bob's DM reached eve");
    /* history is not sent again: the DM from before the AUTH does not arrive */
    assert.equal(c.take((f) => f[0] === 'EVENT' && f[2].id === before.id).length, 0);
  });

  it("a REQ's limit counts only the private events the connection may read", async () => {
    const carol = keypair();
    const pub = await relay.connect();
    const note = signed(carol.sk, { kind: 1, content: 'older public note', created_at: 1700000000 });
    assert.equal((await pub.publish(note)).ok, true);
    const dms = [1, 2, 3].map((i) => signed(carol.sk, {
      kind: 4, tags: [['p', bob.pk]], content: `newer dm ${i}`, created_at: 1700000000 + i,
    }));
    for (const dm of dms) assert.equal((await pub.publish(dm)).ok, true);
    /* three newer DMs a third party may not read must not use up the limit */
    const asEve = await relay.connect();
    await authenticate(relay, asEve, eve);
    const r = await asEve.req('lim', { authors: [carol.pk], limit: 2 });
    assert.deepEqual(r.events.map((e) => e.id), [note.id]);
    const anon = await relay.connect();
    assert.deepEqual((await anon.req('lim', { authors: [carol.pk], limit: 1 })).events.map((e) => e.id), [note.id]);
    /* the recipient, named in their p tags, gets the newest two */
    const asBob = await relay.connect();
    await authenticate(relay, asBob, bob);
    assert.deepEqual((await asBob.req('lim', { authors: [carol.pk], limit: 2 })).events.map((e) => e.id),
      [dms[2].id, dms[1].id]);
  });

  it('COUNT over private kinds is refused; other counts are served', async () => {
    const c = await relay.connect();
    c.send(['COUNT', 'dms', { kinds: [4] }]);
    const closed = await c.waitFor((f) => f[0] === 'CLOSED' && f[1] === 'dms');
    assert.match(closed[2], /^restricted: /);
    c.send(['COUNT', 'notes', { kinds: [1], authors: [alice.pk] }]);
    const ok = await c.waitFor((f) => f[0] === 'COUNT' && f[1] === 'notes');
    assert.equal(ok[2].count, 2);
  });
});

/* private_kinds is 4,1059 unless set; set empty, every kind is public. */
describe('private kinds by default', () => {
  const relay = useRelay({ workers: 1 });
  const alice = keypair();
  const bob = keypair();

  it('a direct message and a gift wrap are their parties\' only', async () => {
    const pub = await relay.connect();
    const dm = signed(alice.sk, { kind: 4, tags: [['p', bob.pk]], content: 'ciphertext' });
    const wrap = signed(alice.sk, { kind: 1059, tags: [['p', bob.pk]], content: 'sealed' });
    for (const ev of [dm, wrap]) assert.equal((await pub.publish(ev)).ok, true);
    const anon = await relay.connect();
    assert.deepEqual((await anon.req('a', { authors: [alice.pk] })).events, []);
    assert.match((await anon.req('k', { kinds: [4, 1059] })).closed, /^auth-required: /);
    anon.send(['COUNT', 'n', { authors: [alice.pk] }]);
    const n = await anon.waitFor((f) => f[1] === 'n');
    assert.equal(n[0], 'CLOSED');
    const asBob = await relay.connect();
    asBob.send(['REQ', 'ask', { kinds: [4] }]); /* brings the challenge */
    await asBob.waitFor((f) => f[0] === 'CLOSED' && f[1] === 'ask');
    await authenticate(relay, asBob, bob);
    const r = await asBob.req('b', { authors: [alice.pk] });
    assert.deepEqual(r.events.map((e) => e.id).sort(), [dm.id, wrap.id].sort());
  });
});

describe('private_kinds set empty', () => {
  const relay = useRelay({ workers: 1, config: { private_kinds: '' } });

  it('serves direct messages to anyone', async () => {
    const alice = keypair();
    const pub = await relay.connect();
    const dm = signed(alice.sk, { kind: 4, tags: [['p', keypair().pk]], content: 'ciphertext' });
    assert.equal((await pub.publish(dm)).ok, true);
    const r = await (await relay.connect()).req('a', { kinds: [4], authors: [alice.pk] });
    assert.deepEqual(r.events.map((e) => e.id), [dm.id]);
  });
});
