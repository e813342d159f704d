/*
 * nip45.test.mjs - COUNT (NIP-45) against the running relay.
 *
 * ["COUNT", id, filters...] is answered ["COUNT", id, {"count": n}], n the
 * number of distinct stored events matching any of the filters (an event
 * matching two filters counts once), from any worker; nothing is
 * subscribed.  A refused COUNT (bad filter, too many filters, bad id) gets
 * ["CLOSED", id, "prefix: reason"].
 *
 * With exactly one filter holding exactly one tag constraint with one
 * 64-hex value, the answer also carries "hll": 256 one-byte registers as
 * 512 hex digits.  The expected registers are computed here, from the
 * NIP's rule, over the pubkeys of the events the test published:
 *   offset = the hex digit at position 32 of the tag value, plus 8;
 *   for each pubkey, register pubkey[offset] = max(itself,
 *     1 + leading zero bits of the pubkey's bytes after offset).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, signed, now, PREFIXES } from './lib/client.mjs';

const MAX_FILTERS = 4;

/* 64 random hex digits with digit d at position 32. */
function valueWithDigit(d) {
  const v = randomBytes(32).toString('hex');
  return v.slice(0, 32) + d + v.slice(33);
}

function leadingZeroBits(bytes) {
  let n = 0;
  for (const b of bytes) {
    if (b === 0) { n += 8; continue; }
    for (let bit = 7; bit >= 0 && !(b & (1 << bit)); bit--) n++;
    break;
  }
  return n;
}

/* The NIP-45 registers for these pubkeys (hex) and this tag value. */
function expectedHll(tagValue, pubkeys) {
  const offset = parseInt(tagValue[32], 16) + 8;
  const reg = new Uint8Array(256);
  for (const pk of pubkeys) {
    const bytes = Buffer.from(pk, 'hex');
    const value = 1 + leadingZeroBits(bytes.subarray(offset + 1));
    if (value > reg[bytes[offset]]) reg[bytes[offset]] = value;
  }
  return Buffer.from(reg).toString('hex');
}

describe('NIP-45 COUNT', () => {
  const relay = useRelay({ config: { max_filters: MAX_FILTERS, private_kinds: '' } });

  function assertClosed(r, what) {
    assert.ok(r.closed !== undefined, `${what}: expected CLOSED, got ${JSON.stringify(r.frame)}`);
    const prefix = r.closed.split(':')[0];
    assert.ok(PREFIXES.includes(prefix) && /^[a-z-]+: ./.test(r.closed), `${what}: "${r.closed}"`);
  }

  describe('counts', () => {
    it('answers ["COUNT", id, {"count": n}] on either worker', async () => {
      const { sk, pk } = keypair();
      const pub = await relay.connectTo(1);
      for (let i = 0; i < 3; i++) await pub.mustPublish(signed(sk, { content: `c${i}` }));
      await pub.mustPublish(signed(sk, { kind: 7, content: '+' }));
      for (const n of [1, 2]) {
        const c = await relay.connectTo(n);
        const r = await c.count('cnt', { authors: [pk], kinds: [1] });
        assert.deepEqual(r.frame, ['COUNT', 'cnt', { count: 3 }]);
        assert.deepEqual((await c.count('all', { authors: [pk] })).frame, ['COUNT', 'all', { count: 4 }]);
        assert.deepEqual((await c.count('none', { authors: [pk], kinds: [9999] })).frame,
          ['COUNT', 'none', { count: 0 }]);
      }
    });

    it('OR\'ed filters count each event once', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const evs = [];
      for (let i = 0; i < 3; i++) evs.push(await c.mustPublish(signed(sk, { content: `o${i}`, tags: [['t', `tag${i}`]] })));
      const cases = [
        [[{ authors: [pk] }, { authors: [pk], kinds: [1] }], 3],
        [[{ ids: [evs[0].id] }, { ids: [evs[0].id, evs[1].id] }], 2],
        [[{ '#t': ['tag0'] , authors: [pk] }, { '#t': ['tag2'], authors: [pk] }], 2],
        [[{ authors: [pk] }, { authors: [pk] }, { authors: [pk] }, { authors: [pk] }], 3],
      ];
      for (const [filters, n] of cases)
        assert.equal((await c.count('or', ...filters)).count, n, JSON.stringify(filters));
    });

    it('counts stored events only: the newest version of a replaceable, no ephemeral', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const t = now();
      await c.mustPublish(signed(sk, { kind: 0, created_at: t - 3, content: '{}' }));
      await c.mustPublish(signed(sk, { kind: 0, created_at: t - 2, content: '{"name":"x"}' }));
      await c.mustPublish(signed(sk, { kind: 30000, created_at: t - 3, tags: [['d', 'a']] }));
      await c.mustPublish(signed(sk, { kind: 30000, created_at: t - 2, tags: [['d', 'a']] }));
      await c.mustPublish(signed(sk, { kind: 20001, content: 'ephemeral' }));
      assert.equal((await c.count('v', { authors: [pk] })).count, 2);
    });

    it('a deleted event is no longer counted', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      const ev = await c.mustPublish(signed(sk, { content: 'counted', created_at: now() - 5 }));
      assert.equal((await c.count('d1', { authors: [pk], kinds: [1] })).count, 1);
      await c.mustPublish(signed(sk, { kind: 5, tags: [['e', ev.id]] }));
      assert.equal((await c.count('d2', { authors: [pk], kinds: [1] })).count, 0);
    });

    it('registers no subscription', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      assert.equal((await c.count('q', { authors: [pk] })).count, 0);
      assert.equal((await c.req('s', { authors: [pk] })).eose, true);
      const ev = await (await relay.connect()).mustPublish(signed(sk, { content: 'after the count' }));
      await c.liveEvent('s', ev.id);
      assert.deepEqual(c.take((m) => m[1] === 'q'), [], 'nothing more arrived for the COUNT id');
    });

    it('echoes any valid id, and does not disturb a subscription with the same id', async () => {
      const { sk, pk } = keypair();
      const c = await relay.connect();
      for (const id of ['x', 'ü "quoted" \\ id', 'i'.repeat(64)])
        assert.deepEqual((await c.count(id, { authors: [pk] })).frame, ['COUNT', id, { count: 0 }]);
      assert.equal((await c.req('same', { authors: [pk] })).eose, true);
      assert.equal((await c.count('same', { authors: [pk] })).count, 0);
      const ev = await c.mustPublish(signed(sk, { content: 'still subscribed' }));
      await c.liveEvent('same', ev.id);
    });
  });

  describe('refused COUNTs get CLOSED', () => {
    const CASES = [
      ['a bad filter', ['COUNT', 'bad', { ids: ['xyz'] }], 'bad'],
      ['a filter that is not an object', ['COUNT', 'arr', [1]], 'arr'],
      ['a bad #e value', ['COUNT', 'e', { '#e': ['ABC'] }], 'e'],
      ['no filter', ['COUNT', 'nofilter'], 'nofilter'],
      ['too many filters', ['COUNT', 'many', ...Array(MAX_FILTERS + 1).fill({ kinds: [1] })], 'many'],
      ['an empty id', ['COUNT', '', { kinds: [1] }], ''],
      ['an id of 65 characters', ['COUNT', 'i'.repeat(65), { kinds: [1] }], 'i'.repeat(65)],
    ];
    for (const [name, frame, id] of CASES) {
      it(name, async () => {
        const c = await relay.connect();
        c.send(frame);
        const m = await c.waitFor((f) => Array.isArray(f) && ['COUNT', 'CLOSED'].includes(f[0]) && f[1] === id,
          { what: `CLOSED for ${JSON.stringify(id)}` });
        assertClosed(m[0] === 'CLOSED' ? { closed: m[2], frame: m } : { frame: m }, name);
        /* the connection still works */
        assert.equal((await c.count('ok', { kinds: [1], limit: 0 })).closed, undefined);
      });
    }
  });

  describe('HyperLogLog', () => {
    /* n authors each publish one event built by template(target). */
    async function publishFrom(c, n, template) {
      const pks = [];
      for (let i = 0; i < n; i++) {
        const { sk, pk } = keypair();
        await c.mustPublish(signed(sk, template));
        pks.push(pk);
      }
      return pks;
    }

    it('reactions {"kinds":[7],"#e":[id]}: registers as the NIP computes them, on either worker', async () => {
      const pub = await relay.connectTo(1);
      const target = valueWithDigit('3');
      const pks = await publishFrom(pub, 40, { kind: 7, content: '+', tags: [['e', target]] });
      /* noise: other kinds and other targets */
      await publishFrom(pub, 3, { kind: 1, tags: [['e', target]] });
      await publishFrom(pub, 3, { kind: 7, tags: [['e', valueWithDigit('3')]] });
      const want = expectedHll(target, pks);
      for (const n of [1, 2]) {
        const c = await relay.connectTo(n);
        const r = await c.count('hll', { kinds: [7], '#e': [target] });
        assert.equal(r.count, 40);
        assert.match(r.hll ?? '', /^[0-9a-f]{512}$/, JSON.stringify(r.frame));
        assert.equal(r.hll, want);
        assert.deepEqual(Object.keys(r.frame[2]).sort(), ['count', 'hll']);
      }
    });

    it('followers {"kinds":[3],"#p":[pk]}: one register per pubkey however many events, newest version only', async () => {
      const c = await relay.connect();
      const target = valueWithDigit('f'); /* offset 23 */
      const pks = [];
      for (let i = 0; i < 25; i++) {
        const { sk, pk } = keypair();
        await c.mustPublish(signed(sk, { kind: 3, created_at: now() - 10, tags: [['p', target]] }));
        await c.mustPublish(signed(sk, { kind: 3, created_at: now() - 5, tags: [['p', target], ['p', pk]] }));
        pks.push(pk);
      }
      /* someone who unfollowed: the newest version no longer tags target */
      const gone = keypair();
      await c.mustPublish(signed(gone.sk, { kind: 3, created_at: now() - 10, tags: [['p', target]] }));
      await c.mustPublish(signed(gone.sk, { kind: 3, created_at: now() - 5, tags: [] }));
      const r = await c.count('f', { kinds: [3], '#p': [target] });
      assert.equal(r.count, 25);
      assert.equal(r.hll, expectedHll(target, pks));
    });

    it('the offset follows the digit at position 32: the same authors give other registers', async () => {
      const c = await relay.connect();
      const low = valueWithDigit('0'); /* offset 8 */
      const high = valueWithDigit('c'); /* offset 20 */
      const pks = [];
      for (let i = 0; i < 20; i++) {
        const { sk, pk } = keypair();
        await c.mustPublish(signed(sk, { kind: 7, tags: [['e', low]] }));
        await c.mustPublish(signed(sk, { kind: 7, tags: [['e', high]] }));
        pks.push(pk);
      }
      const a = await c.count('lo', { '#e': [low] });
      const b = await c.count('hi', { '#e': [high] });
      assert.equal(a.hll, expectedHll(low, pks));
      assert.equal(b.hll, expectedHll(high, pks));
      assert.notEqual(a.hll, b.hll);
    });

    it('one author reacting twice counts twice but sets one register', async () => {
      const c = await relay.connect();
      const target = valueWithDigit('7');
      const { sk, pk } = keypair();
      await c.mustPublish(signed(sk, { kind: 7, content: '+', tags: [['e', target]] }));
      await c.mustPublish(signed(sk, { kind: 7, content: '-', tags: [['e', target]] }));
      const r = await c.count('twice', { kinds: [7], '#e': [target] });
      assert.equal(r.count, 2);
      assert.equal(r.hll, expectedHll(target, [pk]));
    });

    it('any tag letter qualifies, other fields do not matter; no match gives empty registers', async () => {
      const c = await relay.connect();
      const target = valueWithDigit('b');
      const pks = await publishFrom(c, 10, { kind: 1, tags: [['t', target]] });
      const r = await c.count('t', { '#t': [target], kinds: [1], since: now() - 600 });
      assert.equal(r.count, 10);
      assert.equal(r.hll, expectedHll(target, pks));
      const none = await c.count('none', { '#e': [valueWithDigit('b')] });
      assert.equal(none.count, 0);
      assert.equal(none.hll, '00'.repeat(256));
    });

    it('is absent for two filters, two tag constraints, two values, or a value that is not 64 hex', async () => {
      const c = await relay.connect();
      const target = valueWithDigit('5');
      const other = valueWithDigit('6');
      await publishFrom(c, 3, { kind: 7, tags: [['e', target], ['t', 'x'], ['t', target.toUpperCase()]] });
      const CASES = [
        [[{ '#e': [target] }, { kinds: [7] }], 'two filters'],
        [[{ '#e': [target], '#t': ['x'] }], 'two tag constraints'],
        [[{ '#e': [target, other] }], 'two values'],
        [[{ '#t': [target.toUpperCase()] }], 'uppercase hex'],
        [[{ '#t': ['x'] }], 'not hex'],
        [[{ kinds: [7] }], 'no tag constraint'],
        [[{ ids: [target] }], 'ids are no tag'],
      ];
      for (const [filters, what] of CASES) {
        const r = await c.count('no', ...filters);
        assert.equal(r.closed, undefined, what);
        assert.deepEqual(Object.keys(r.frame[2]), ['count'], `${what}: ${JSON.stringify(r.frame)}`);
      }
    });
  });

  itStopsCleanly(relay);
});

describe('NIP-45 COUNT at the largest max_filters', () => {
  const relay = useRelay({ workers: 1, config: { max_filters: 1000, private_kinds: '' } });

  /* SQLite refuses one compound SELECT of more than 500 terms; a COUNT of
   * 501 filters or more was answered "error: the count failed". */
  it('counts with 1000 filters, each event once', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const t = now();
    for (let i = 0; i < 5; i++)
      await c.mustPublish(signed(sk, { created_at: t - 100 + i, content: `m${i}` }));
    const filters = [];
    for (let i = 0; i < 1000; i++) filters.push({ authors: [pk], since: t - 100 + (i % 5) });
    const r = await c.count('many', ...filters);
    assert.deepEqual(r.frame, ['COUNT', 'many', { count: 5 }]);
  });
});
