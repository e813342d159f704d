/*
 * nul.test.mjs - strings holding U+0000 and the other control characters
 * (NIP-01: content and tag values are any JSON string).
 *
 * Such an event is accepted whichever way its id was hashed: NIP-01's form
 * (control characters raw, signedCanonical()) or JSON.stringify()'s form
 * (\u00XX, what nostr-tools hashes: signed()).  It is stored and served so
 * that JSON.parse gives back the very string; a `#t` filter holding U+0000
 * matches exactly that tag value, stored, live across workers, and in
 * COUNT; NIP-50 search, NIP-09 deletions and relayctl export/import keep
 * the string whole, and a NOTICE naming it is never cut inside a character.  Every test uses values of its own (random prefixes).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Relay, itStopsCleanly, useRelay, relayctlInput as relayctlWith } from './lib/relay.mjs';
import {
  keypair, signed, signedCanonical, verifyCanonical, takeEventIds, now,
} from './lib/client.mjs';

/* Every control character below 0x20 except the seven NIP-01 escapes. */
const CONTROLS = [...Array(32).keys()]
  .filter((c) => !'\b\t\n\f\r'.includes(String.fromCharCode(c)))
  .map((c) => String.fromCharCode(c)).join('');

/* A value no other test uses (letters only). */
function word() {
  return 'w' + [...randomBytes(8)].map((b) => String.fromCharCode(97 + (b % 26))).join('');
}

/* The two ways a client may hash the id: [name, signer]. */
const FORMS = [
  ['NIP-01 form (raw)', signedCanonical],
  ['JSON.stringify form (\\u00XX, nostr-tools)', signed],
];

/* The stored events a REQ with filters returns, asserted not refused. */
async function fetch(c, ...filters) {
  const r = await c.req(`q${Math.random()}`, ...filters);
  assert.equal(r.closed, null, `REQ ${JSON.stringify(filters)} was closed: ${r.closed}`);
  return r.events;
}

describe('strings with U+0000 and other control characters', () => {
  const relay = useRelay({ workers: 2, config: { private_kinds: '' } });

  for (const [form, sign] of FORMS) {
    it(`content and tags with U+0000 are accepted, id hashed in the ${form}`, async () => {
      const { sk } = keypair();
      const c = await relay.connect();
      const ev = sign(sk, { content: 'a\0b', tags: [['t', `${word()}\0x`], ['x', '\0', '\0\0']] });
      const r = await c.publish(ev);
      assert.deepEqual([r.ok, r.message], [true, '']);
      const [back] = await fetch(c, { ids: [ev.id] });
      assert.deepEqual(back, ev);
      assert.equal(back.content, 'a\u0000b');
      assert.equal(back.content.length, 3);
      assert.deepEqual(back.tags[1], ['x', '\0', '\0\0']);
    });

    it(`every other control character is accepted, id hashed in the ${form}`, async () => {
      const { sk } = keypair();
      const c = await relay.connect();
      const ev = sign(sk, { content: `<${CONTROLS}>`, tags: [['t', CONTROLS], ['c', '\x01']] });
      assert.equal((await c.publish(ev)).ok, true);
      assert.deepEqual(await fetch(c, { ids: [ev.id] }), [ev]);
    });
  }

  it('the two forms name two different ids; both verify as what they are', async () => {
    const { sk } = keypair();
    const created_at = now();
    const a = signedCanonical(sk, { content: 'x\0y', created_at });
    const b = signed(sk, { content: 'x\0y', created_at });
    assert.notEqual(a.id, b.id);
    assert.ok(verifyCanonical(a));
    const c = await relay.connect();
    assert.equal((await c.publish(a)).ok, true);
    assert.equal((await c.publish(b)).ok, true);
    assert.deepEqual((await fetch(c, { ids: [a.id, b.id] })).map((e) => e.id).sort(), [a.id, b.id].sort());
  });

  it('an id over the content cut at its NUL, or with the NUL dropped, is refused', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const cut = { ...signedCanonical(sk, { content: 'a' }), content: 'a\0b' };
    const dropped = { ...signed(sk, { content: 'ab' }), content: 'a\0b' };
    for (const ev of [cut, dropped]) {
      const r = await c.publish(ev);
      assert.equal(r.ok, false);
      assert.match(r.message, /^invalid: id does not match/);
    }
    assert.deepEqual(await fetch(c, { ids: [cut.id, dropped.id] }), []);
  });

  it('the frame on the wire spells U+0000 as \\u0000 and JSON.parse gives the string back', async () => {
    const { sk } = keypair();
    const c = await relay.connect();
    const ev = signed(sk, { content: 'p\0q\x01r', tags: [['t', 's\0']] });
    await c.mustPublish(ev);
    const frames = [];
    c.ws.on('message', (data) => frames.push(data.toString('utf8')));
    await fetch(c, { ids: [ev.id] });
    const text = frames.find((f) => f.startsWith('["EVENT"'));
    assert.ok(text.includes('"content":"p\\u0000q\\u0001r"'), text);
    assert.ok(text.includes('["t","s\\u0000"]'), text);
    assert.deepEqual(JSON.parse(text)[2], ev);
  });

  it('#t with U+0000 matches that tag value exactly, stored and in COUNT', async () => {
    const { sk } = keypair();
    const v = word();
    const c = await relay.connect();
    const withNul = await c.mustPublish(signed(sk, { tags: [['t', `${v}\0b`]] }));
    const prefix = await c.mustPublish(signed(sk, { tags: [['t', v]] }));
    const other = await c.mustPublish(signedCanonical(sk, { tags: [['t', `${v}\0c`]] }));
    const ids = async (...f) => (await fetch(c, ...f)).map((e) => e.id).sort();
    assert.deepEqual(await ids({ '#t': [`${v}\0b`] }), [withNul.id]);
    assert.deepEqual(await ids({ '#t': [v] }), [prefix.id]);
    assert.deepEqual(await ids({ '#t': [`${v}\0`] }), []);
    assert.deepEqual(await ids({ '#t': [`${v}\0b`, `${v}\0c`] }), [withNul.id, other.id].sort());
    assert.equal((await c.count('n1', { '#t': [`${v}\0b`] })).count, 1);
    assert.equal((await c.count('n2', { '#t': [v, `${v}\0c`] })).count, 2);
    assert.equal((await c.count('n3', { '#t': [`${v}\0`] })).count, 0);
  });

  it('live: a #t filter with U+0000 on one worker gets only its events from the other', async () => {
    const { sk } = keypair();
    const v = word();
    const sub = await relay.connectTo(1);
    const pub = await relay.connectTo(2);
    const subid = `live\0${v}`;
    assert.equal((await sub.req(subid, { '#t': [`${v}\0`] })).eose, true);
    await pub.mustPublish(signed(sk, { tags: [['t', v]] }));
    await pub.mustPublish(signed(sk, { tags: [['t', `${v}\0\0`]] }));
    const hit = await pub.mustPublish(signedCanonical(sk, { content: '\0', tags: [['t', `${v}\0`]] }));
    const got = await sub.liveEvent(subid, hit.id);
    assert.deepEqual(got, hit);
    /* stored delivers in commit order, so the two published first are not coming */
    assert.deepEqual(takeEventIds(sub, subid), []);
  });

  it('NIP-50: words on both sides of a U+0000 are found, stored and live', async () => {
    const { sk } = keypair();
    const [a, b] = [word(), word()];
    const c = await relay.connect();
    const live = await relay.connect();
    assert.equal((await live.req('s', { search: b })).eose, true);
    const ev = await c.mustPublish(signed(sk, { content: `${a}\0${b}` }));
    assert.deepEqual(await live.liveEvent('s', ev.id), ev);
    assert.deepEqual((await fetch(c, { search: a })).map((e) => e.id), [ev.id]);
    assert.deepEqual((await fetch(c, { search: b })).map((e) => e.id), [ev.id]);
  });

  it('NIP-09: deleting the address with U+0000 in its d tag leaves the one without', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const t = now() - 10;
    const d = word();
    const nul = await c.mustPublish(signed(sk, { kind: 30000, tags: [['d', `${d}\0`]], created_at: t }));
    const bare = await c.mustPublish(signed(sk, { kind: 30000, tags: [['d', d]], created_at: t }));
    const byId = await c.mustPublish(signed(sk, { content: 'gone\0', created_at: t }));
    await c.mustPublish(signed(sk, {
      kind: 5, created_at: t + 1, tags: [['a', `30000:${pk}:${d}\0`], ['e', byId.id]],
    }));
    const left = (await fetch(c, { authors: [pk], kinds: [30000, 1] })).map((e) => e.id);
    assert.deepEqual(left, [bare.id]);
    const again = await c.publish(nul);
    assert.deepEqual([again.ok, again.message.split(':')[0]], [false, 'blocked']);
  });

  it('relayctl export writes \\u0000, and import into another relay gives the same events', async () => {
    const { sk, pk } = keypair();
    const v = word();
    const c = await relay.connect();
    const events = [
      await c.mustPublish(signedCanonical(sk, { content: 'e\0x', tags: [['t', `${v}\0`]] })),
      await c.mustPublish(signed(sk, { content: `c${CONTROLS}`, tags: [['t', v]] })),
    ];
    const out = await relay.relayctl('export', JSON.stringify({ authors: [pk] }));
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.split('\n').filter((l) => l);
    assert.equal(lines.length, 2);
    assert.ok(lines.some((l) => l.includes('"content":"e\\u0000x"')), out.stdout);
    assert.deepEqual(lines.map((l) => JSON.parse(l)).sort((x, y) => (x.id < y.id ? -1 : 1)),
      [...events].sort((x, y) => (x.id < y.id ? -1 : 1)));
    /* a filter with U+0000 in a tag value, on the command line */
    const one = await relay.relayctl('export', JSON.stringify({ '#t': [`${v}\0`] }));
    assert.deepEqual(one.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l).id), [events[0].id]);

    const second = new Relay({ workers: 1 });
    await second.start();
    try {
      const imp = await relayctlWith(second, ['--json', 'import'], out.stdout);
      assert.equal(imp.code, 0, imp.stderr);
      assert.deepEqual(JSON.parse(imp.stdout),
        { lines: 2, stored: 2, duplicate: 0, superseded: 0, refused: 0, invalid: 0, blank: 0,
          extra_fields: 0, complete: true });
      const c2 = await second.connect();
      const back = await fetch(c2, { '#t': [`${v}\0`] });
      assert.deepEqual(back, [events[0]]);
      const again = await second.relayctl('export');
      assert.deepEqual(again.stdout, out.stdout);
    } finally {
      await second.stop();
    }
  });

  it('an unknown verb is named in its NOTICE cut between characters, U+0000 included', async () => {
    const c = await relay.connect();
    for (const last of ['\0', '\u00e9']) {
      const verb = 'x'.repeat(39) + last + 'y';
      c.send(JSON.stringify([verb]));
      const n = await c.waitFor((f) => f[0] === 'NOTICE', { what: 'NOTICE' });
      assert.equal(n[1], `invalid: unknown message type '${'x'.repeat(39)}'`);
    }
    assert.ok(c.isOpen);
  });

  itStopsCleanly(relay);
});
