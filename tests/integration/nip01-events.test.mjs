/*
 * nip01-events.test.mjs - EVENT and its OK reply (NIP-01): accepted events
 * read back exactly, duplicates, every validation rejection with its prefix,
 * and the canonical-id edge cases (escapes, unicode, emoji, \u escapes on
 * the wire, "\/", DEL, other control characters).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import {
  keypair, signed, signedCanonical, broken, now, asciiJson, longEscapeJson,
} from './lib/client.mjs';

const LIMITS = {
  max_content_length: 1024,
  max_event_tags: 5,
  created_at_max_future: 900,
  created_at_max_past: 3600,
  max_message_bytes: 16384,
};

/* Asserts an OK frame: ["OK", id, ok, message] with a string message that,
 * when prefix is given, starts with "prefix:". */
function assertOk(r, id, ok, prefix) {
  assert.equal(r.frame.length, 4, `OK has four elements: ${JSON.stringify(r.frame)}`);
  assert.equal(r.id, id);
  assert.equal(r.ok, ok, `OK for ${id}: ${JSON.stringify(r.frame)}`);
  assert.equal(typeof r.message, 'string');
  if (prefix) assert.match(r.message, new RegExp(`^${prefix}: ?\\S`), JSON.stringify(r.frame));
}

/* The event with this id as stored (read through conn), or undefined. */
async function fetchById(conn, id) {
  const r = await conn.req(`get-${id.slice(0, 8)}`, { ids: [id] });
  assert.equal(r.eose, true, `REQ by id was refused: ${r.closed}`);
  assert.ok(r.events.length <= 1, `ids filter returned ${r.events.length} events`);
  return r.events[0];
}

describe('NIP-01 events', () => {
  const relay = useRelay({ config: LIMITS });
  const { sk } = keypair();

  describe('accepted events are stored and read back unchanged', () => {
    /* [name, template]; created_at defaults to now */
    const ACCEPTED = [
      ['plain text note', { content: 'hello' }],
      ['empty content and no tags', { content: '' }],
      ['tags with several values', { tags: [['e', 'a'.repeat(64), 'wss://x', 'reply'], ['t', 'nostr'], ['custom-tag', 'x', 'y']] }],
      ['kind 0', { kind: 0, content: '{"name":"a"}' }],
      ['kind 65535 (largest)', { kind: 65535 }],
      ['content of exactly max_content_length ASCII characters', { content: 'a'.repeat(1024) }],
      /* NIP-11 counts characters: 2,048 and 4,096 bytes, still 1,024 characters */
      ['content of exactly max_content_length two-byte characters', { content: 'é'.repeat(1024) }],
      ['content of exactly max_content_length four-byte characters', { content: '😀'.repeat(1024) }],
      ['exactly max_event_tags tags', { tags: [['t', '1'], ['t', '2'], ['t', '3'], ['t', '4'], ['t', '5']] }],
      ['created_at 800 s in the future (limit 900)', { created_at: now() + 800 }],
      ['created_at 3500 s in the past (limit 3600)', { created_at: now() - 3500 }],
    ];
    for (const [name, template] of ACCEPTED) {
      it(name, async () => {
        const ev = signed(sk, template);
        const pub = await relay.connectTo(1);
        assertOk(await pub.publish(ev), ev.id, true);
        const other = await relay.connectTo(2);
        assert.deepEqual(await fetchById(other, ev.id), ev);
      });
    }
  });

  describe('duplicates are OK true with "duplicate:"', () => {
    it('the same event twice on one connection', async () => {
      const ev = signed(sk, { content: 'dup on one connection' });
      const c = await relay.connect();
      assertOk(await c.publish(ev), ev.id, true);
      assertOk(await c.publish(ev), ev.id, true, 'duplicate');
    });

    it('the same event again through the other worker', async () => {
      const ev = signed(sk, { content: 'dup across workers' });
      const a = await relay.connectTo(1);
      const b = await relay.connectTo(2);
      assertOk(await a.publish(ev), ev.id, true);
      assertOk(await b.publish(ev), ev.id, true, 'duplicate');
      const got = await b.req('dups', { ids: [ev.id] });
      assert.equal(got.events.length, 1);
    });
  });

  describe('invalid events get OK false "invalid:" naming their id and are not stored', () => {
    const other = signed(keypair().sk, { content: 'someone else' });
    /* [name, make(valid event) -> frame object]; the id stays well-formed */
    const INVALID = [
      ['id is not the hash of the event', (e) => broken.badId(e)],
      ['content changed after signing', (e) => broken.tampered(e)],
      ['signature does not verify', (e) => broken.badSig(e)],
      ['signature of another event', (e) => broken.foreignSig(e, other)],
      ['pubkey of someone else', (e) => broken.with(e, 'pubkey', other.pubkey)],
      ['pubkey in uppercase hex', (e) => broken.upperPubkey(e)],
      ['sig in uppercase hex', (e) => broken.upperSig(e)],
      ['pubkey too short', (e) => broken.shortPubkey(e)],
      ['sig too short', (e) => broken.shortSig(e)],
      ['sig not hex', (e) => broken.nonHexSig(e)],
      ['kind is a string', (e) => broken.with(e, 'kind', String(e.kind))],
      ['kind is not an integer', (e) => broken.with(e, 'kind', 1.5)],
      ['created_at is a string', (e) => broken.with(e, 'created_at', String(e.created_at))],
      ['created_at is not an integer', (e) => broken.with(e, 'created_at', e.created_at + 0.5)],
      ['tags is not an array', (e) => broken.with(e, 'tags', 'x')],
      ['a tag is not an array', (e) => broken.with(e, 'tags', ['t'])],
      ['a tag value is a number', (e) => broken.with(e, 'tags', [['t', 5]])],
      ['content is a number', (e) => broken.with(e, 'content', 5)],
      ['content is null', (e) => broken.with(e, 'content', null)],
      ['sig missing', (e) => broken.with(e, 'sig', undefined)],
      ['pubkey missing', (e) => broken.with(e, 'pubkey', undefined)],
      ['content missing', (e) => broken.with(e, 'content', undefined)],
      ['tags missing', (e) => broken.with(e, 'tags', undefined)],
      ['kind missing', (e) => broken.with(e, 'kind', undefined)],
      ['created_at missing', (e) => broken.with(e, 'created_at', undefined)],
    ];
    for (const [name, make] of INVALID) {
      it(name, async () => {
        const ev = signed(sk, { content: `invalid: ${name}` });
        const bad = make(ev);
        const c = await relay.connect();
        assertOk(await c.publish(bad), bad.id, false, 'invalid');
        assert.equal(await fetchById(c, ev.id), undefined, 'the valid original must not be stored');
      });
    }

    it('an EVENT with an extra element gets OK false naming the readable id, and is not stored', async () => {
      const ev = signed(sk, { content: 'extra element' });
      const c = await relay.connect();
      c.send(['EVENT', ev, 'x']);
      const r = await c.okFor(ev.id);
      assert.equal(r.ok, false);
      assert.match(r.message, /^invalid: /);
      assert.equal(await fetchById(c, ev.id), undefined);
    });

    /* properly signed events that break a configured or NIP-01 limit */
    const LIMIT_BREAKERS = [
      ['kind 65536', () => ({ kind: 65536 })],
      ['kind -1', () => ({ kind: -1 })],
      ['content one character over max_content_length', () => ({ content: 'a'.repeat(1025) })],
      ['content one two-byte character over max_content_length', () => ({ content: 'é'.repeat(1025) })],
      ['one tag more than max_event_tags', () => ({ tags: [['t', '1'], ['t', '2'], ['t', '3'], ['t', '4'], ['t', '5'], ['t', '6']] })],
      ['created_at 1000 s in the future (limit 900)', () => ({ created_at: now() + 1000 })],
      ['created_at 3700 s in the past (limit 3600)', () => ({ created_at: now() - 3700 })],
    ];
    for (const [name, template] of LIMIT_BREAKERS) {
      it(name, async () => {
        const ev = signed(sk, template());
        const c = await relay.connect();
        assertOk(await c.publish(ev), ev.id, false, 'invalid');
        assert.equal(await fetchById(c, ev.id), undefined);
      });
    }
  });

  describe('events without a well-formed id are refused, never accepted', () => {
    /* OK false or NOTICE are both acceptable here: the relay may not be able
     * to name an id that is not 64 lowercase hex. */
    const MALFORMED_ID = [
      ['id in uppercase hex', (e) => broken.upperId(e)],
      ['id too short', (e) => broken.shortId(e)],
      ['id too long', (e) => broken.longId(e)],
      ['id is a number', (e) => broken.with(e, 'id', 5)],
      ['id missing', (e) => broken.with(e, 'id', undefined)],
    ];
    for (const [name, make] of MALFORMED_ID) {
      it(name, async () => {
        const ev = signed(sk, { content: `malformed id: ${name}` });
        const c = await relay.connect();
        const reply = await c.publishRaw(JSON.stringify(['EVENT', make(ev)]));
        if (reply[0] === 'OK') {
          assert.equal(reply[2], false, JSON.stringify(reply));
          assert.match(reply[3], /^invalid: ?\S/);
        } else {
          assert.equal(typeof reply[1], 'string');
        }
        assert.equal(await fetchById(c, ev.id), undefined);
      });
    }
  });

  describe('an EVENT the JSON reader refuses still gets its OK when its id can be read', () => {
    /* A lone UTF-16 surrogate is no character: the message is not JSON. */
    for (const [name, escape] of [['a lone high surrogate', '\\ud800'], ['a lone low surrogate', '\\udfff']]) {
      it(name, async () => {
        const ev = signed(sk, { content: `surrogate ${name} PLACEHOLDER` });
        const c = await relay.connect();
        const reply = await c.publishRaw(JSON.stringify(['EVENT', ev]).replace('PLACEHOLDER', escape));
        assert.deepEqual(reply, ['OK', ev.id, false, 'invalid: not valid JSON']);
        assert.equal(await fetchById(c, ev.id), undefined);
      });
    }
    it('without a readable id: a NOTICE', async () => {
      const c = await relay.connect();
      const reply = await c.publishRaw('["EVENT",{"id":"short","content":"\\ud800"}]');
      assert.deepEqual(reply, ['NOTICE', 'invalid: not valid JSON']);
    });
  });

  describe('canonical ids: every id nostr-tools computes is accepted and read back', () => {
    const SEVEN = 'quote" backslash\\ newline\n return\r tab\t backspace\b formfeed\f';
    const TEXTS = [
      ['the seven escaped characters', SEVEN],
      ['latin, CJK, RTL and combining marks', 'é ü ß 中文 עברית e\u0301'],
      ['emoji, skin tone and ZWJ sequences', '🎉 👍🏽 👨‍👩‍👧 🏳️‍🌈'],
      ['slash and a script end tag', 'a/b </script> http://x/y'],
      ['DEL is written raw', 'del\x7fdel'],
      ['backslash followed by letters that look like escapes', '\\n \\u0041 \\/ \\"'],
      ['characters outside the BMP and U+2028/2029', '𝄞 \u2028 \u2029 \uffff'],
    ];
    /* how the frame is written on the wire; the decoded strings are the same */
    const ENCODINGS = [
      ['as raw UTF-8', (frame) => JSON.stringify(frame)],
      ['with \\uXXXX escapes for every non-ASCII character', asciiJson],
      ['with "\\/" and \\u000a-style escapes', longEscapeJson],
    ];
    for (const [what, text] of TEXTS) {
      for (const [how, encode] of ENCODINGS) {
        it(`${what}, sent ${how}`, async () => {
          /* the "enc" tag keeps the three encodings three distinct events */
          const ev = signed(sk, { content: text, tags: [['t', text], ['x', text, text], ['enc', how]] });
          const c = await relay.connect();
          c.send(encode(['EVENT', ev]));
          assertOk(await c.okFor(ev.id), ev.id, true);
          assert.deepEqual(await fetchById(c, ev.id), ev);
        });
      }
    }

    it('other control characters are hashed raw, not as \\u00XX', async () => {
      const text = 'nul-free controls: \x01 \x02 \x1b \x1f end';
      const ev = signedCanonical(sk, { content: text, tags: [['t', '\x01']] });
      const c = await relay.connect();
      assertOk(await c.publish(ev), ev.id, true);
      /* and the relay's reply must still be valid JSON that decodes back */
      assert.deepEqual(await fetchById(c, ev.id), ev);
    });

    it('a string with \\u0000 is kept whole; an id over the text cut at the NUL is refused', async () => {
      const c = await relay.connect();
      const whole = signedCanonical(sk, { content: 'a\0b' });
      const cut = { ...signedCanonical(sk, { content: 'a' }), content: 'a\0b' };
      const inTag = signedCanonical(sk, { content: 'tag', tags: [['t', 'x\0']] });
      for (const ev of [whole, inTag]) {
        assertOk(await c.publish(ev), ev.id, true);
        assert.deepEqual(await fetchById(c, ev.id), ev);
      }
      assertOk(await c.publish(cut), cut.id, false, 'invalid');
      assert.equal(await fetchById(c, cut.id), undefined);
      /* A backslash followed by the text u0000 is no NUL. */
      const text = signedCanonical(sk, { content: 'a\\u0000b' });
      assertOk(await c.publish(text), text.id, true);
      assert.deepEqual(await fetchById(c, text.id), text);
    });

    it('an id hashed with \\u00XX for a control character, as nostr-tools does, is accepted', async () => {
      /* nostr-tools hashes JSON.stringify output, which escapes \x01 */
      const ev = signed(sk, { content: 'escaped control \x01 here' });
      const c = await relay.connect();
      assertOk(await c.publish(ev), ev.id, true);
      assert.deepEqual(await fetchById(c, ev.id), ev);
    });
  });

  describe('acknowledged means committed', () => {
    /* [name, which connection reads: 'same' or 'other' worker] */
    const READERS = [
      ['the same connection', 'same'],
      ['a connection on the other worker', 'other'],
    ];
    for (const [name, reader] of READERS) {
      it(`after OK true, a REQ on ${name} finds the event at once (20 rounds)`, async () => {
        const conns = [await relay.connectTo(1), await relay.connectTo(2)];
        for (let i = 0; i < 20; i++) {
          const ev = signed(sk, { content: `committed ${reader} ${i}` });
          const pub = conns[i % 2];
          assertOk(await pub.publish(ev), ev.id, true);
          const read = reader === 'same' ? pub : conns[(i + 1) % 2];
          assert.deepEqual(await fetchById(read, ev.id), ev, `round ${i}`);
        }
      });
    }
  });

  describe('oversized messages', () => {
    it('a frame over max_message_bytes is not accepted and the relay keeps serving', async () => {
      const big = 'b'.repeat(1000);
      const tags = [['t', big.repeat(4)], ['t', big.repeat(4)], ['t', big.repeat(4)], ['t', big.repeat(4)], ['t', big.repeat(4)]];
      const ev = signed(sk, { tags, content: 'over max_message_bytes' });
      assert.ok(JSON.stringify(['EVENT', ev]).length > LIMITS.max_message_bytes);
      const c = await relay.connect();
      c.send(['EVENT', ev]);
      const reply = await c.waitFor((m) => m[0] === 'NOTICE' || (m[0] === 'OK' && m[1] === ev.id),
        { what: 'OK or NOTICE', timeout: 3000 }).catch((err) => {
        if (!c.closeInfo) throw err; /* closing the connection is also a refusal */
        return null;
      });
      if (reply && reply[0] === 'OK') assert.equal(reply[2], false, JSON.stringify(reply));
      const fresh = await relay.connect();
      assert.equal(await fetchById(fresh, ev.id), undefined);
    });
  });

  it('the OK for a valid event is true with a string message', async () => {
    const ev = signed(sk, { content: 'shape of OK' });
    const c = await relay.connect();
    const r = await c.publish(ev);
    assert.deepEqual([r.frame[0], r.frame[1], r.frame[2], typeof r.frame[3]], ['OK', ev.id, true, 'string']);
  });

  itStopsCleanly(relay);
});
