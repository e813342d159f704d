/*
 * nip01-req.test.mjs - REQ, CLOSE and malformed input (NIP-01): every filter
 * field, OR between filters and AND within one, limit ordering and ties,
 * limit 0, the max_limit clamp, replacing a subscription by reusing its id,
 * CLOSE without CLOSED, CLOSED with a prefix for each refusal, sub ids echoed
 * exactly, and NOTICE for malformed frames on a connection that stays usable.
 * The answer order README.md promises: one subscription's stored events,
 * EOSE, then live events; a refused REQ's CLOSED after all else for its id.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { itStopsCleanly, useRelay, sleep, until, HOST } from './lib/relay.mjs';
import { keypair, signed, PREFIXES, asciiJson } from './lib/client.mjs';
import { metricValue } from './lib/metrics.mjs';

const LIMITS = { max_limit: 5, max_subscriptions: 4, max_filters: 3, max_filter_values: 4 };
const T = 1600000000; /* fixture times: older than anything else in this file */
const ZERO = '0'.repeat(64);
const REFUSAL = new RegExp(`^(${PREFIXES.join('|')}): ?\\S`);

function sortedIds(events) {
  return events.map((e) => e.id).sort();
}

/* No filter below may match more than max_limit (5) stored events: what a
 * relay does with a filter without limit beyond max_limit is its choice. */
describe('NIP-01 REQ', () => {
  const relay = useRelay({ config: LIMITS });

  /* Two authors with events chosen so that each filter below selects a
   * distinct set; filled in before() and named by key. */
  const A = keypair();
  const B = keypair();
  const ev = {};

  before(async () => {
    const c = await relay.connect();
    const put = async (name, sk, kind, dt, tags) => {
      ev[name] = await c.mustPublish(signed(sk, { kind, created_at: T + dt, tags, content: name }));
    };
    await put('a1', A.sk, 7001, 1, [['t', 'alpha'], ['e', ZERO], ['p', B.pk]]);
    await put('a2', A.sk, 7002, 2, [['t', 'beta'], ['T', 'alpha']]);
    await put('a3', A.sk, 7001, 3, [['t', 'gamma', 'alpha']]);
    await put('a4', A.sk, 7003, 4, [['r', 'alpha']]);
    await put('b1', B.sk, 7001, 2, [['t', 'alpha'], ['p', A.pk]]);
    await put('b2', B.sk, 7002, 5, [['e', ev.a1.id], ['t', 'beta']]);
    await put('b3', B.sk, 7003, 6, [['Z', 'zed'], ['d', 'dd']]);
  });

  describe('filters select exactly the matching stored events', () => {
    const AB = () => [A.pk, B.pk];
    /* [name, () => filters, names of the events expected] */
    const CASES = [
      ['ids: one', () => [{ ids: [ev.a1.id] }], ['a1']],
      ['ids: several are OR\'ed', () => [{ ids: [ev.a1.id, ev.b2.id] }], ['a1', 'b2']],
      ['ids: unknown id', () => [{ ids: [ZERO] }], []],
      ['authors: one', () => [{ authors: [A.pk] }], ['a1', 'a2', 'a3', 'a4']],
      ['authors: two are OR\'ed', () => [{ authors: AB(), since: T + 4 }], ['a4', 'b2', 'b3']],
      ['kinds: one', () => [{ kinds: [7001] }], ['a1', 'a3', 'b1']],
      ['kinds: two are OR\'ed', () => [{ kinds: [7002, 7003] }], ['a2', 'a4', 'b2', 'b3']],
      ['authors AND kinds', () => [{ authors: [B.pk], kinds: [7001] }], ['b1']],
      ['#t', () => [{ '#t': ['alpha'] }], ['a1', 'b1']],
      ['#t: values are OR\'ed', () => [{ '#t': ['alpha', 'beta'] }], ['a1', 'a2', 'b1', 'b2']],
      ['#t: only the first value of a tag counts', () => [{ '#t': ['gamma'] }], ['a3']],
      ['#T is not #t (case sensitive)', () => [{ '#T': ['alpha'] }], ['a2']],
      ['#e', () => [{ '#e': [ev.a1.id] }], ['b2']],
      ['#e: the zero id', () => [{ '#e': [ZERO] }], ['a1']],
      ['#p', () => [{ '#p': [B.pk] }], ['a1']],
      ['#r', () => [{ '#r': ['alpha'] }], ['a4']],
      ['#Z (uppercase letter)', () => [{ '#Z': ['zed'] }], ['b3']],
      ['#d', () => [{ '#d': ['dd'] }], ['b3']],
      ['two tag filters are AND\'ed', () => [{ '#t': ['beta'], '#e': [ev.a1.id] }], ['b2']],
      ['since is inclusive', () => [{ authors: AB(), since: T + 5 }], ['b2', 'b3']],
      ['until is inclusive', () => [{ authors: AB(), until: T + 2 }], ['a1', 'a2', 'b1']],
      ['since = until', () => [{ authors: AB(), since: T + 2, until: T + 2 }], ['a2', 'b1']],
      ['since > until matches nothing', () => [{ authors: AB(), since: T + 4, until: T + 3 }], []],
      ['every field AND\'ed', () => [{ ids: [ev.a1.id], authors: [A.pk], kinds: [7001], '#t': ['alpha'], since: T + 1, until: T + 1 }], ['a1']],
      ['one field failing fails the filter', () => [{ authors: [A.pk], kinds: [7002], '#t': ['alpha'] }], []],
      ['filters are OR\'ed', () => [{ ids: [ev.a1.id] }, { authors: [B.pk], kinds: [7003] }], ['a1', 'b3']],
      ['an event matching two filters is sent once', () => [{ authors: [A.pk] }, { kinds: [7001] }], ['a1', 'a2', 'a3', 'a4', 'b1']],
      ['three filters', () => [{ '#r': ['alpha'] }, { '#Z': ['zed'] }, { '#T': ['alpha'] }], ['a2', 'a4', 'b3']],
    ];
    for (const [name, filters, expected] of CASES) {
      it(name, async () => {
        const c = await relay.connect();
        const r = await c.req('f', ...filters());
        assert.equal(r.closed, null, `REQ refused: ${r.closed}`);
        assert.deepEqual(sortedIds(r.events), expected.map((n) => ev[n].id).sort());
      });
    }
  });

  describe('limit', () => {
    /* C's six events: one at T+1, three tied at T+2, one at T+3, one at T+4. */
    const C = keypair();
    let byAge; /* newest first, ties by lowest id: the order limit must follow */
    before(async () => {
      const c = await relay.connect();
      const evs = [];
      for (const [i, dt] of [1, 2, 2, 2, 3, 4].entries()) {
        evs.push(await c.mustPublish(signed(C.sk, { kind: 1, created_at: T + dt, content: `c${i}` })));
      }
      byAge = evs.sort((x, y) => y.created_at - x.created_at || (x.id < y.id ? -1 : 1)).map((e) => e.id);
    });

    /* [name, () => filters, () => ids expected in order] */
    const CASES = [
      ['limit 1 is the newest', () => [{ authors: [C.pk], limit: 1 }], () => byAge.slice(0, 1)],
      ['limit 3 cuts inside a tie at the lowest id', () => [{ authors: [C.pk], limit: 3 }], () => byAge.slice(0, 3)],
      ['limit 5: newest first, ties lowest id first', () => [{ authors: [C.pk], limit: 5 }], () => byAge.slice(0, 5)],
      ['limit above max_limit is clamped to max_limit (5)', () => [{ authors: [C.pk], limit: 100 }], () => byAge.slice(0, 5)],
      ['limit with until', () => [{ authors: [C.pk], until: T + 2, limit: 2 }], () => byAge.slice(2, 4)],
      ['limit 0 sends no stored events', () => [{ authors: [C.pk], limit: 0 }], () => []],
    ];
    for (const [name, filters, expected] of CASES) {
      it(name, async () => {
        const c = await relay.connect();
        const r = await c.req('lim', ...filters());
        assert.equal(r.closed, null, `REQ refused: ${r.closed}`);
        assert.deepEqual(r.events.map((e) => e.id), expected());
      });
    }

    it('limit applies per filter', async () => {
      const c = await relay.connect();
      const r = await c.req('per', { authors: [C.pk], limit: 1 }, { authors: [A.pk], limit: 2 });
      assert.deepEqual(sortedIds(r.events), [byAge[0], ev.a4.id, ev.a3.id].sort());
    });

    it('limit 0 then live events', async () => {
      const D = keypair();
      const c = await relay.connect();
      await c.mustPublish(signed(D.sk, { content: 'stored before' }));
      const r = await c.req('zero', { authors: [D.pk], limit: 0 });
      assert.deepEqual(r, { events: [], eose: true, closed: null });
      const live = await (await relay.connect()).mustPublish(signed(D.sk, { content: 'live after' }));
      await c.liveEvent('zero', live.id);
    });
  });

  describe('subscription lifetime', () => {
    it('REQ with an open sub id replaces its filters', async () => {
      const D = keypair();
      const E = keypair();
      const c = await relay.connect();
      const pub = await relay.connect();
      const e0 = await pub.mustPublish(signed(E.sk, { content: 'stored E' }));
      assert.deepEqual(await c.req('s', { authors: [D.pk] }), { events: [], eose: true, closed: null });
      const r = await c.req('s', { authors: [E.pk] });
      assert.deepEqual(r, { events: [e0], eose: true, closed: null });
      const fromD = await pub.mustPublish(signed(D.sk, { content: 'old filter' }));
      const fromE = await pub.mustPublish(signed(E.sk, { content: 'new filter' }));
      await c.liveEvent('s', fromE.id);
      assert.deepEqual(c.take((m) => m[0] === 'EVENT' && m[2].id === fromD.id), [], 'old filters still deliver');
      assert.deepEqual(c.take((m) => m[0] === 'CLOSED'), []);
    });

    /* The refused REQ replaced the open one (NIP-01): the client was told
     * its id is closed, so nothing may come for that id any more. */
    for (const [name, bad] of [
      ['a bad filter', [{ ids: ['not-hex'] }]],
      ['too many filters', [{}, {}, {}, {}]],
    ]) {
      it(`a REQ refused for ${name} ends the open subscription of its id`, async () => {
        const D = keypair();
        const c = await relay.connect();
        const pub = await relay.connect();
        assert.equal((await c.req('s', { authors: [D.pk] })).eose, true);
        assert.equal((await c.req('keep', { authors: [D.pk] })).eose, true);
        const r = await c.req('s', ...bad);
        assert.match(r.closed ?? '', /^invalid: /);
        const e = await pub.mustPublish(signed(D.sk, { content: `after a REQ refused for ${name}` }));
        await c.liveEvent('keep', e.id);
        assert.deepEqual(c.take((m) => m[0] === 'EVENT' && m[1] === 's'), [], 'an event came for the closed id');
      });
    }

    it('a subscription id holding \\u0000 is its own subscription, echoed whole', async () => {
      const D = keypair();
      const c = await relay.connect();
      const pub = await relay.connect();
      assert.equal((await c.req('a', { authors: [D.pk] })).eose, true);
      c.send('["REQ","a\\u0000b",{"authors":["' + D.pk + '"]}]');
      await c.waitFor((f) => f[0] === 'EOSE' && f[1] === 'a\0b', { what: 'EOSE for "a\\u0000b"' });
      const e = await pub.mustPublish(signed(D.sk, { content: 'to both' }));
      await c.liveEvent('a', e.id);
      await c.liveEvent('a\0b', e.id);
    });

    it('CLOSE ends a subscription without a CLOSED reply', async () => {
      const D = keypair();
      const c = await relay.connect();
      const pub = await relay.connect();
      assert.equal((await c.req('gone', { authors: [D.pk] })).eose, true);
      c.closeSub('gone');
      assert.equal((await c.req('stay', { authors: [D.pk] })).eose, true);
      const e = await pub.mustPublish(signed(D.sk, { content: 'after CLOSE' }));
      await c.liveEvent('stay', e.id);
      assert.deepEqual(c.take(), [], 'nothing else: no CLOSED, no event for the closed sub');
    });

    it('sub ids are scoped to their connection', async () => {
      const D = keypair();
      const c1 = await relay.connect();
      const c2 = await relay.connect();
      assert.equal((await c1.req('same', { authors: [D.pk] })).eose, true);
      assert.equal((await c2.req('same', { authors: [D.pk] })).eose, true);
      c1.closeSub('same');
      assert.equal((await c1.req('sync', { ids: [ZERO] })).eose, true);
      const e = await c1.mustPublish(signed(D.sk, { content: 'scoped' }));
      await c2.liveEvent('same', e.id);
      await sleep(200); /* c1's copy, if wrongly sent, travels a separate path */
      assert.deepEqual(c1.take(), [], 'closing on c1 closed only c1\'s subscription');
    });
  });

  describe('refused REQs get CLOSED with a prefix', () => {
    /* Asserts that REQ subid ...filters is answered ["CLOSED", subid, "prefix: ..."]. */
    async function assertRefused(c, subid, ...filters) {
      const r = await c.req(subid, ...filters);
      assert.equal(r.eose, false, `expected CLOSED for ${JSON.stringify(filters)}, got EOSE`);
      assert.equal(typeof r.closed, 'string');
      assert.match(r.closed, REFUSAL);
    }

    it('more than max_subscriptions (4) open subscriptions', async () => {
      const c = await relay.connect();
      for (const s of ['s1', 's2', 's3', 's4']) assert.equal((await c.req(s, { ids: [ZERO] })).eose, true, s);
      await assertRefused(c, 's5', { ids: [ZERO] });
      assert.equal((await c.req('s1', { ids: [ZERO] })).eose, true, 'replacing an open one is not a new one');
      c.closeSub('s2');
      assert.equal((await c.req('s5', { ids: [ZERO] })).eose, true, 'CLOSE frees a slot');
    });

    it('more than max_filters (3) filters', async () => {
      const c = await relay.connect();
      await assertRefused(c, 'many', { ids: [ZERO] }, { ids: [ZERO] }, { ids: [ZERO] }, { ids: [ZERO] });
      assert.equal((await c.req('three', { ids: [ZERO] }, { ids: [ZERO] }, { ids: [ZERO] })).eose, true);
    });

    it('more than max_filter_values (4) values in one list', async () => {
      const c = await relay.connect();
      const keys = Array.from({ length: 5 }, () => keypair().pk);
      await assertRefused(c, 'values', { authors: keys });
      assert.equal((await c.req('four', { authors: keys.slice(0, 4) })).eose, true);
    });

    it('sub id longer than max_subid_length (64)', async () => {
      const c = await relay.connect();
      await assertRefused(c, 'x'.repeat(65), { ids: [ZERO] });
      assert.equal((await c.req('y'.repeat(64), { ids: [ZERO] })).eose, true);
    });

    it('empty sub id', async () => {
      const c = await relay.connect();
      await assertRefused(c, '', { ids: [ZERO] });
    });

    /* [name, filter] */
    const BAD_FILTERS = [
      ['ids with a hex prefix', { ids: ['abcd'] }],
      ['ids in uppercase hex', { ids: ['AB'.repeat(32)] }],
      ['ids not an array', { ids: ZERO }],
      ['authors not hex', { authors: ['z'.repeat(64)] }],
      ['authors with a 63-character value', { authors: ['a'.repeat(63)] }],
      ['#e with a short value', { '#e': ['abc'] }],
      ['#p in uppercase hex', { '#p': ['CD'.repeat(32)] }],
      ['kinds with a string', { kinds: ['1'] }],
      ['#t with a number', { '#t': [5] }],
      ['since a string', { since: '1' }],
      ['until a float', { until: 1.5 }],
      ['limit a string', { limit: '5' }],
      ['filter not an object', 'kinds'],
    ];
    for (const [name, filter] of BAD_FILTERS) {
      it(`bad filter: ${name}`, async () => {
        const c = await relay.connect();
        await assertRefused(c, 'bad', filter);
        assert.equal((await c.req('after', { ids: [ZERO] })).eose, true, 'connection still usable');
      });
    }

    it('a refused REQ leaves an open sub with that id working', async () => {
      /* an earlier valid "keep" stays; a refused REQ names another id */
      const D = keypair();
      const c = await relay.connect();
      assert.equal((await c.req('keep', { authors: [D.pk] })).eose, true);
      await assertRefused(c, 'other', { ids: ['abcd'] });
      const e = await (await relay.connect()).mustPublish(signed(D.sk, { content: 'still here' }));
      await c.liveEvent('keep', e.id);
    });
  });

  describe('fields the relay may not support do not break a REQ', () => {
    /* Either answered (EOSE, possibly having ignored the field) or refused
     * with CLOSED; never silence, a crash or a dead connection. */
    const UNKNOWN = [
      ['an unknown field', { ids: [ZERO], colour: 'red' }],
      ['search (NIP-50)', { authors: [A.pk], search: 'alpha' }],
      ['a multi-letter tag filter', { ids: [ZERO], '#tt': ['x'] }],
    ];
    for (const [name, filter] of UNKNOWN) {
      it(name, async () => {
        const c = await relay.connect();
        const r = await c.req('u', filter);
        if (!r.eose) assert.match(r.closed, REFUSAL);
        assert.deepEqual((await c.req('next', { ids: [ev.a1.id] })).events, [ev.a1]);
      });
    }
  });

  describe('sub ids are echoed back exactly', () => {
    const SUBIDS = [
      'plain',
      'with "quotes" and \\backslash\\',
      'é 中文 🎉',
      'tab\tnewline\ncr\r',
      '["EOSE","x"]',
      '   ',
      '/slash/',
      'x'.repeat(64),
    ];
    for (const subid of SUBIDS) {
      it(JSON.stringify(subid), async () => {
        const c = await relay.connect();
        const r = await c.req(subid, { ids: [ev.b1.id] });
        assert.deepEqual(r, { events: [ev.b1], eose: true, closed: null });
        c.closeSub(subid);
      });
    }

    it('a sub id sent with \\u escapes is echoed as the decoded string', async () => {
      const subid = 'é🎉"\\';
      const c = await relay.connect();
      c.send(asciiJson(['REQ', subid, { ids: [ev.b1.id] }]));
      const r = await c.collect(subid);
      assert.deepEqual(r, { events: [ev.b1], eose: true, closed: null });
    });
  });

  describe('malformed frames get a NOTICE and the connection stays usable', () => {
    /* [name, frame text] */
    const MALFORMED = [
      ['not JSON', 'hello'],
      ['truncated JSON', '["REQ", "x", {'],
      ['a JSON object', '{"REQ": "x"}'],
      ['a JSON string', '"EVENT"'],
      ['a JSON number', '5'],
      ['an empty array', '[]'],
      ['an unknown verb', '["FOO", "x"]'],
      ['a lowercase verb', '["req", "x", {}]'],
      ['a verb that is not a string', '[5, "x"]'],
      ['EVENT without an event', '["EVENT"]'],
      ['EVENT with a number', '["EVENT", 5]'],
      ['EVENT with an array', '["EVENT", []]'],
      ['REQ without a sub id', '["REQ"]'],
      ['REQ with a numeric sub id', '["REQ", 5, {}]'],
      ['CLOSE without a sub id', '["CLOSE"]'],
      ['CLOSE with a numeric sub id', '["CLOSE", 5]'],
      ['trailing garbage after the array', '["REQ", "x", {}] x'],
    ];
    for (const [name, text] of MALFORMED) {
      it(name, async () => {
        const c = await relay.connect();
        c.send(text);
        const m = await c.waitFor((f) => Array.isArray(f) && f[0] === 'NOTICE', { what: 'NOTICE' });
        assert.equal(m.length, 2, JSON.stringify(m));
        assert.equal(typeof m[1], 'string');
        assert.deepEqual((await c.req('after', { ids: [ev.a1.id] })).events, [ev.a1]);
        assert.deepEqual(c.take((f) => f[0] !== 'NOTICE'), [], 'nothing but NOTICE for the bad frame');
      });
    }
  });

  describe('hostile frames', () => {
    async function relayStillServes() {
      for (const n of [1, 2]) {
        const c = await relay.connectTo(n);
        assert.deepEqual((await c.req('alive', { ids: [ev.a1.id] })).events, [ev.a1], `worker ${n}`);
      }
    }

    it('deeply nested JSON is refused without crashing', async () => {
      const c = await relay.connect();
      c.send('['.repeat(60000) + ']'.repeat(60000));
      c.send('["EVENT", ' + '{"a":'.repeat(20000) + '1' + '}'.repeat(20000) + ']');
      await c.waitFor((f) => Array.isArray(f) && f[0] === 'NOTICE', { what: 'NOTICE' })
        .catch((err) => { if (!c.closeInfo) throw err; });
      await relayStillServes();
    });

    it('a text frame that is not UTF-8 closes the connection', async () => {
      const c = await relay.connect();
      c.ws.send(Buffer.from([0x5b, 0x22, 0xff, 0xfe, 0x22, 0x5d]), { binary: false });
      const info = await c.waitClosed({ timeout: 3000 });
      assert.equal(info.code, 1007, `close code ${info.code}`);
      await relayStillServes();
    });

    it('an unmasked client frame closes the connection, unanswered (RFC 6455)', async () => {
      /* A raw client: ws always masks.  One masked REQ first, answered;
       * then the same REQ unmasked, which must not be. */
      const sock = connect({ host: HOST, port: relay.port });
      let got = Buffer.alloc(0);
      const closed = new Promise((r) => sock.on('close', r));
      sock.on('data', (d) => { got = Buffer.concat([got, d]); });
      await new Promise((r) => sock.once('connect', r));
      sock.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
      await until(() => got.includes('\r\n\r\n'), { timeout: 3000, what: 'the upgrade' });
      const frame = (text, mask) => {
        const payload = Buffer.from(text);
        const key = Buffer.from([1, 2, 3, 4]);
        const body = mask ? Buffer.from(payload.map((b, i) => b ^ key[i % 4])) : payload;
        return Buffer.concat([Buffer.from([0x81, (mask ? 0x80 : 0) | payload.length]), mask ? key : Buffer.alloc(0), body]);
      };
      sock.write(frame('["REQ","masked",{"limit":0}]', true));
      await until(() => got.includes('["EOSE","masked"]'), { timeout: 3000, what: 'EOSE for the masked REQ' });
      sock.write(frame('["REQ","bare",{"limit":0}]', false));
      await Promise.race([closed, sleep(3000).then(() => assert.fail('the connection stayed open'))]);
      assert.equal(got.includes('"bare"'), false, 'the unmasked REQ was answered');
      await relayStillServes();
      const closedFor = async () => metricValue((await relay.httpGet('/metrics')).body,
        'relay_worker_unmasked_closed_total{') ?? 0;
      await until(async () => (await closedFor()) === 1, { timeout: 5000, what: 'the unmasked close counted' });
    });

    it('answers a websocket ping', async () => {
      const c = await relay.connect();
      const pong = new Promise((r) => c.ws.once('pong', (data) => r(data.toString())));
      c.ws.ping('are you there');
      const got = await Promise.race([pong, new Promise((r) => setTimeout(() => r('no pong'), 3000))]);
      assert.equal(got, 'are you there');
    });
  });

  itStopsCleanly(relay);
});

/* The order README.md promises ("Order of answers"), and only that: any
 * other two answers may come in either order. */
describe('answer order', () => {
  const relay = useRelay({ workers: 1 });
  const forSub = (id) => (f) => Array.isArray(f) && ['EVENT', 'EOSE', 'CLOSED'].includes(f[0]) && f[1] === id;

  it('one subscription gets its stored events, then EOSE, then live events', async () => {
    const kp = keypair();
    const pub = await relay.connect();
    const stored = [];
    for (let i = 0; i < 3; i++)
      stored.push((await pub.mustPublish(signed(kp.sk, { content: `stored ${i}` }))).id);
    const c = await relay.connect();
    const live = signed(kp.sk, { content: 'live' });
    c.send(['REQ', 'o', { authors: [kp.pk] }]);
    await pub.mustPublish(live); /* may land in the history or come live */
    await until(() => c.inbox.some((f) => forSub('o')(f) && f[0] === 'EVENT' && f[2].id === live.id) &&
      c.inbox.some((f) => forSub('o')(f) && f[0] === 'EOSE'), { timeout: 10000, what: 'EOSE and the live event' });
    const frames = c.take(forSub('o'));
    const eose = frames.findIndex((f) => f[0] === 'EOSE');
    const before = frames.slice(0, eose).map((f) => f[2].id);
    const after = frames.slice(eose + 1).map((f) => f[2].id);
    assert.deepEqual(before.filter((id) => id !== live.id).sort(), [...stored].sort());
    assert.deepEqual(after, before.includes(live.id) ? [] : [live.id]);
  });

  it('a refused REQ\'s CLOSED comes after everything for its id, and nothing after it', async () => {
    const kp = keypair();
    const c = await relay.connect();
    await c.mustPublish(signed(kp.sk, { content: 'history' }));
    assert.equal((await c.req('watch', { authors: [kp.pk], limit: 0 })).eose, true);
    c.send(['REQ', 'x', { authors: [kp.pk] }]);
    c.send(['REQ', 'x', { ids: ['not hex'] }]);
    const closed = await c.waitFor((f) => f[0] === 'CLOSED' && f[1] === 'x');
    assert.match(closed[2], /^invalid: /);
    c.take(forSub('x')); /* what came before the CLOSED (the history, perhaps) */
    const later = await c.mustPublish(signed(kp.sk, { content: 'later' }));
    await c.liveEvent('watch', later.id); /* a live event for x would have come by now */
    assert.deepEqual(c.take(forSub('x')), [], 'a frame for x came after its CLOSED');
  });
});
