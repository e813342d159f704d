/*
 * nip50.test.mjs - search (NIP-50) against the running relay.
 *
 * A filter's "search" is split on whitespace into terms; every term must
 * match as words (SQLite FTS5 unicode61: case and accents folded,
 * punctuation dropped, no part of a word), live exactly as stored: the
 * same events come live as a REQ afterwards finds; key:value terms are
 * extensions this relay does not support and ignores.  Stored results come in descending relevance, and
 * limit applies after that ordering.  search combines (AND) with the other
 * fields of its filter; filters stay OR'ed.  The index follows events in
 * and out (replaced, deleted).  A search subscription receives matching
 * live events only.
 *
 * Every test searches for words of its own (random tokens), so the tests
 * never see each other's events.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, signed, now, takeEventIds } from './lib/client.mjs';

/* A word no other test uses (letters only, so FTS5 keeps it whole). */
function word() {
  return 'w' + [...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('');
}

describe('NIP-50 search', () => {
  const relay = useRelay({ config: { private_kinds: '' } });

  /* ids of the stored events a REQ with these filters returns, in order */
  async function search(c, ...filters) {
    const r = await c.req(`s${Math.random()}`, ...filters);
    assert.equal(r.closed, null, `REQ ${JSON.stringify(filters)} was closed: ${r.closed}`);
    return r.events.map((e) => e.id);
  }

  const sorted = (ids) => [...ids].sort();

  it('every term must match, case-insensitively, on either worker', async () => {
    const { sk } = keypair();
    const [a, b, c] = [word(), word(), word()];
    const pub = await relay.connectTo(1);
    const both = await pub.mustPublish(signed(sk, { content: `The ${a.toUpperCase()} and the ${b}.` }));
    const onlyA = await pub.mustPublish(signed(sk, { content: `just ${a} here` }));
    const onlyB = await pub.mustPublish(signed(sk, { content: `${b}!` }));
    for (const n of [1, 2]) {
      const s = await relay.connectTo(n);
      assert.deepEqual(sorted(await search(s, { search: a })), sorted([both.id, onlyA.id]));
      assert.deepEqual(sorted(await search(s, { search: `${b.toUpperCase()}` })), sorted([both.id, onlyB.id]));
      assert.deepEqual(await search(s, { search: `${a} ${b}` }), [both.id]);
      assert.deepEqual(await search(s, { search: `  ${b}\t${a.toUpperCase()}  ` }), [both.id]);
      assert.deepEqual(await search(s, { search: `${a} ${b} ${c}` }), []);
    }
  });

  it('stored events match whole words', async () => {
    const { sk } = keypair();
    const a = word();
    const c = await relay.connect();
    const ev = await c.mustPublish(signed(sk, { content: `${a}, ${a}-ish and ${a}s` }));
    await c.mustPublish(signed(sk, { content: `${a}suffix only` }));
    assert.deepEqual(await search(c, { search: a }), [ev.id]);
    assert.deepEqual(await search(c, { search: a.slice(0, -2) }), [], 'a prefix is no word');
  });

  it('unsupported key:value extensions are ignored', async () => {
    const { sk, pk } = keypair();
    const a = word();
    const c = await relay.connect();
    const hit = await c.mustPublish(signed(sk, { content: `about ${a}` }));
    const other = await c.mustPublish(signed(sk, { content: 'something else' }));
    assert.deepEqual(await search(c, { search: `${a} include:spam language:en domain:example.com` }), [hit.id]);
    assert.deepEqual(await search(c, { search: `language:en ${a} nsfw:false` }), [hit.id]);
    /* nothing left to look for: the other fields alone decide */
    assert.deepEqual(sorted(await search(c, { search: 'include:spam', authors: [pk] })), sorted([hit.id, other.id]));
  });

  it('combines with the other fields of its filter; filters stay OR\'ed', async () => {
    const alice = keypair();
    const bob = keypair();
    const a = word();
    const c = await relay.connect();
    const t = now();
    const a1 = await c.mustPublish(signed(alice.sk, { kind: 1, created_at: t - 100, content: `${a} old` }));
    const a2 = await c.mustPublish(signed(alice.sk, { kind: 30023, created_at: t - 10, tags: [['d', 'x'], ['t', 'tagged']], content: `${a} article` }));
    const b1 = await c.mustPublish(signed(bob.sk, { kind: 1, created_at: t - 10, content: `${a} by bob` }));
    await c.mustPublish(signed(alice.sk, { kind: 1, created_at: t - 10, content: 'not the word' }));
    assert.deepEqual(sorted(await search(c, { search: a, authors: [alice.pk] })), sorted([a1.id, a2.id]));
    assert.deepEqual(await search(c, { search: a, kinds: [30023] }), [a2.id]);
    assert.deepEqual(sorted(await search(c, { search: a, since: t - 50 })), sorted([a2.id, b1.id]));
    assert.deepEqual(await search(c, { search: a, until: t - 50 }), [a1.id]);
    assert.deepEqual(await search(c, { search: a, '#t': ['tagged'] }), [a2.id]);
    assert.deepEqual(await search(c, { search: a, ids: [b1.id, a1.id], authors: [bob.pk] }), [b1.id]);
    /* OR'ed with a plain filter; an event matching both comes once */
    const r = await search(c, { search: a, authors: [bob.pk] }, { authors: [alice.pk], kinds: [30023] });
    assert.deepEqual(sorted(r), sorted([b1.id, a2.id]));
    const twice = await search(c, { search: a, authors: [bob.pk] }, { ids: [b1.id] });
    assert.deepEqual(twice, [b1.id]);
    assert.deepEqual(await search(c, { search: a, limit: 0 }), []);
  });

  it('orders by relevance, newest-first does not apply, and limit cuts after ranking', async () => {
    const { sk, pk } = keypair();
    const a = word();
    const c = await relay.connect();
    const t = now();
    /* the same length, more occurrences of the word = more relevant; the
     * most relevant is the oldest */
    const best = await c.mustPublish(signed(sk, { created_at: t - 30, content: `${a} ${a} ${a} ${a} x` }));
    const mid = await c.mustPublish(signed(sk, { created_at: t - 20, content: `${a} ${a} y y y` }));
    const least = await c.mustPublish(signed(sk, { created_at: t - 10, content: `${a} z z z z` }));
    assert.deepEqual(await search(c, { search: a, authors: [pk] }), [best.id, mid.id, least.id]);
    assert.deepEqual(await search(c, { search: a, limit: 2 }), [best.id, mid.id]);
    assert.deepEqual(await search(c, { search: a, limit: 1 }), [best.id]);
    /* without search the same events come newest first */
    assert.deepEqual(await search(c, { authors: [pk], limit: 2 }), [least.id, mid.id]);
  });

  it('query syntax in the search is taken as words, never as FTS operators', async () => {
    const { sk } = keypair();
    const [a, b] = [word(), word()];
    const c = await relay.connect();
    const ab = await c.mustPublish(signed(sk, { content: `${a} or ${b}` }));
    const onlyA = await c.mustPublish(signed(sk, { content: `${a}` }));
    const onlyB = await c.mustPublish(signed(sk, { content: `${b} near not and` }));
    await c.mustPublish(signed(sk, { content: `${a}xyz` }));
    const CASES = [
      [`${a} OR ${b}`, [ab.id]],
      [`${a} NOT ${b}`, []],
      [`${b} NOT`, [onlyB.id]],
      [`${a} -${b}`, [ab.id]],
      [`${a}*`, [ab.id, onlyA.id]],
      [`"${a}" OR "${b}"`, [ab.id]],
      [`"${a}`, [ab.id, onlyA.id]],
      [`NEAR(${a} ${b})`, []],
      [`^${b}`, [ab.id, onlyB.id]],
      [`content: ${a}`, []],
      [`(${a}) AND`, []],
    ];
    for (const [q, want] of CASES)
      assert.deepEqual(sorted(await search(c, { search: q })), sorted(want), `search ${JSON.stringify(q)}`);
  });

  it('the index follows events out: replaced and deleted events are no longer found', async () => {
    const { sk, pk } = keypair();
    const [a, b, d] = [word(), word(), word()];
    const c = await relay.connect();
    const t = now();
    await c.mustPublish(signed(sk, { kind: 30023, created_at: t - 20, tags: [['d', 'doc']], content: `draft ${a}` }));
    const v2 = await c.mustPublish(signed(sk, { kind: 30023, created_at: t - 10, tags: [['d', 'doc']], content: `final ${b}` }));
    assert.deepEqual(await search(c, { search: a }), []);
    assert.deepEqual(await search(c, { search: b }), [v2.id]);
    await c.mustPublish(signed(sk, { kind: 0, created_at: t - 20, content: `profile ${d}` }));
    const p2 = await c.mustPublish(signed(sk, { kind: 0, created_at: t - 10, content: `profile` }));
    assert.deepEqual(await search(c, { search: d }), []);
    assert.deepEqual(await search(c, { search: `profile`, authors: [pk] }), [p2.id]);
    const gone = await c.mustPublish(signed(sk, { content: `deleted ${d}`, created_at: t - 5 }));
    assert.deepEqual(await search(c, { search: d }), [gone.id]);
    await c.mustPublish(signed(sk, { kind: 5, tags: [['e', gone.id]] }));
    assert.deepEqual(await search(c, { search: d }), []);
    assert.equal((await c.count('n', { search: d })).count, 0);
  });

  it('COUNT counts what the search finds', async () => {
    const { sk } = keypair();
    const [a, b] = [word(), word()];
    const c = await relay.connect();
    for (let i = 0; i < 4; i++) await c.mustPublish(signed(sk, { content: `${a} number ${i}` }));
    await c.mustPublish(signed(sk, { content: `${a} ${b}` }));
    assert.equal((await c.count('n1', { search: a })).count, 5);
    assert.equal((await c.count('n2', { search: `${b} ${a}` })).count, 1);
    assert.equal((await c.count('n3', { search: `${a} include:spam` })).count, 5);
  });

  describe('live', () => {
    it('a search subscription receives only matching live events, from either worker', async () => {
      const [a, b] = [word(), word()];
      const { sk } = keypair();
      const sub = await relay.connectTo(1);
      assert.deepEqual((await sub.req('live', { search: `${a} ${b}` })).events, []);
      for (const n of [1, 2]) {
        const pub = await relay.connectTo(n);
        /* contents differ per worker: the same event twice would be a duplicate */
        await pub.mustPublish(signed(sk, { content: `${a} alone ${n}` }));
        await pub.mustPublish(signed(sk, { content: `${b} alone ${n}` }));
        await pub.mustPublish(signed(sk, { content: `neither ${n}` }));
        const hit = await pub.mustPublish(signed(sk, { content: `${b.toUpperCase()} then ${a} ${n}` }));
        assert.deepEqual(await sub.liveEvent('live', hit.id), hit);
        assert.deepEqual(takeEventIds(sub, 'live'), [], `only the match arrived (from worker ${n})`);
      }
    });

    it('a live event matches exactly when the same event stored does', async () => {
      const a = word();
      const { sk } = keypair();
      const contents = [
        `${a}zebra crossing`, `${a} can't stop`, `${a} pelican`, `${a} \u00c9cole primaire`,
        `${a} n\u00famero uno`, `${a} hello, world`, `${a}, a, b`,
      ];
      const queries = [
        `${a}zeb`, `${a} can`, `${a} ecole`, `${a} NUMERO`, `${a} hello,`, `${a} can't`, `${a} ,`,
        `${a.toUpperCase()}`, `${a}zebra`,
      ];
      const sub = await relay.connectTo(1);
      for (const [i, q] of queries.entries())
        assert.equal((await sub.req(`q${i}`, { search: q })).eose, true);
      const pub = await relay.connectTo(2);
      for (const content of contents) await pub.mustPublish(signed(sk, { content }));
      /* Deliveries come in commit order: once the marker (found by the
       * query of ${a} alone, q7) is in, every earlier one is too. */
      const marker = await pub.mustPublish(signed(sk, { content: `${a} marker` }));
      await sub.liveEvent('q7', marker.id);
      const check = await relay.connect();
      for (const [i, q] of queries.entries()) {
        const stored = sorted((await search(check, { search: q })).filter((id) => id !== marker.id));
        const live = sorted(takeEventIds(sub, `q${i}`).filter((id) => id !== marker.id));
        assert.deepEqual(live, stored, `search "${q}": live ${live.length}, stored ${stored.length}`);
      }
    });

    it('extensions are ignored live too, and other fields still apply', async () => {
      const a = word();
      const alice = keypair();
      const bob = keypair();
      const sub = await relay.connect();
      assert.equal((await sub.req('ext', { search: `include:spam ${a}`, authors: [alice.pk] })).eose, true);
      const pub = await relay.connect();
      await pub.mustPublish(signed(bob.sk, { content: `${a} from bob` }));
      await pub.mustPublish(signed(alice.sk, { content: 'no word' }));
      const hit = await pub.mustPublish(signed(alice.sk, { content: `${a} from alice` }));
      await sub.liveEvent('ext', hit.id);
      assert.deepEqual(takeEventIds(sub, 'ext'), []);
    });
  });

  itStopsCleanly(relay);
});
