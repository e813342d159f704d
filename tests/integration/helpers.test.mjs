/*
 * helpers.test.mjs - checks the test helpers themselves, without a relay:
 * the event builders against nostr-tools' verifyEvent, the hand-written
 * NIP-01 serialization, the frame encoders, the config writer, and the
 * Client against a scripted websocket server on 127.0.0.1.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { WebSocketServer } from 'ws';
import { verifyEvent, getEventHash } from 'nostr-tools/pure';
import {
  Client, keypair, signed, signedCanonical, verifyCanonical, canonical, canonicalId,
  broken, asciiJson, longEscapeJson, plain, waitBound,
} from './lib/client.mjs';
import { configText, freePort } from './lib/relay.mjs';

const { sk, pk } = keypair();
const SEVEN = 'q" b\\ n\n r\r t\t b\b f\f';

describe('event builders', () => {
  it('signed() makes events nostr-tools verifies', () => {
    for (const content of ['', 'hello', SEVEN, 'é ü 中文 🎉 👨‍👩‍👧', '/ </script> \x7f']) {
      const ev = signed(sk, { kind: 1, tags: [['t', content]], content });
      assert.equal(ev.pubkey, pk);
      assert.match(ev.id, /^[0-9a-f]{64}$/);
      assert.match(ev.sig, /^[0-9a-f]{128}$/);
      assert.equal(verifyEvent(plain(ev)), true, JSON.stringify(content));
      assert.equal(verifyCanonical(ev), true);
    }
  });

  it('canonical() escapes exactly the seven characters', () => {
    const ev = { pubkey: pk, created_at: 1, kind: 1, tags: [], content: SEVEN + '\x01\x1f\x7f/é🎉' };
    const text = canonical(ev);
    assert.equal(text, `[0,"${pk}",1,1,[],"q\\" b\\\\ n\\n r\\r t\\t b\\b f\\f\x01\x1f\x7f/é🎉"]`);
  });

  it('canonical() agrees with nostr-tools where JSON.stringify does', () => {
    const ev = signed(sk, { tags: [['e', 'x'], ['p', 'ü']], content: SEVEN + '🎉/\x7f' });
    assert.equal(canonicalId(ev), getEventHash(ev));
    assert.equal(canonicalId(ev), ev.id);
  });

  it('signedCanonical() differs from nostr-tools for other control characters', () => {
    const ev = signedCanonical(sk, { content: 'a\x01b' });
    assert.equal(verifyCanonical(ev), true);
    assert.notEqual(ev.id, getEventHash(ev));
    assert.equal(verifyEvent(plain(ev)), false);
  });

  it('every broken variant fails verification', () => {
    const ev = signed(sk, { content: 'x' });
    const other = signed(sk, { content: 'y' });
    const variants = {
      badSig: broken.badSig(ev), badId: broken.badId(ev), tampered: broken.tampered(ev),
      foreignSig: broken.foreignSig(ev, other), upperId: broken.upperId(ev),
      upperPubkey: broken.upperPubkey(ev),
      shortId: broken.shortId(ev), longId: broken.longId(ev),
      shortPubkey: broken.shortPubkey(ev), shortSig: broken.shortSig(ev),
      nonHexSig: broken.nonHexSig(ev),
    };
    for (const [name, b] of Object.entries(variants)) {
      assert.equal(verifyEvent(b), false, name);
    }
    assert.match(variants.badSig.sig, /^[0-9a-f]{128}$/);
    assert.match(variants.badId.id, /^[0-9a-f]{64}$/);
    /* secp256k1 accepts an uppercase signature; NIP-01 does not */
    assert.doesNotMatch(broken.upperSig(ev).sig, /^[0-9a-f]{128}$/);
    assert.equal(verifyEvent(plain(ev)), true, 'the original is untouched');
  });

  it('broken.with() replaces or removes one field', () => {
    const ev = signed(sk);
    assert.equal(broken.with(ev, 'kind', '1').kind, '1');
    assert.equal('sig' in broken.with(ev, 'sig', undefined), false);
    assert.equal(ev.kind, 1);
  });
});

describe('frame encoders', () => {
  const value = ['EVENT', { content: SEVEN + '/é🎉\x7f', tags: [['t', 'a\\nb']] }];

  it('asciiJson() is printable ASCII and decodes to the same value', () => {
    const text = asciiJson(value);
    assert.match(text, /^[\x20-\x7e]*$/);
    assert.match(text, /\\ud83c\\udf89/);
    assert.deepEqual(JSON.parse(text), value);
  });

  it('longEscapeJson() writes \\/ and \\u00XX and decodes to the same value', () => {
    const text = longEscapeJson(value);
    assert.match(text, /\\\//);
    assert.match(text, /\\u000a/);
    assert.doesNotMatch(text.replace(/\\\\/g, ''), /\\[nrtbf]/);
    assert.deepEqual(JSON.parse(text), value);
  });

  it('configText() writes key = value lines', () => {
    assert.equal(configText({ port: 1, relay_name: 'A B', skip: undefined }),
      '# written by tests/integration/lib/relay.mjs\n\nport = 1\nrelay_name = A B\n');
  });

  it('freePort() returns a usable port number', async () => {
    const p = await freePort();
    assert.ok(Number.isInteger(p) && p > 0 && p < 65536);
  });
});

describe('Client against a scripted server', () => {
  let wss;
  let url;
  before(async () => {
    wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    wss.on('headers', (headers) => headers.push('X-Relay-Worker: 7'));
    wss.on('connection', (ws) => {
      ws.on('message', (data) => {
        const text = data.toString();
        let m;
        try { m = JSON.parse(text); } catch { ws.send('not json {'); return; }
        if (m[0] === 'REQ') {
          ws.send(JSON.stringify(['NOTICE', 'unrelated']));
          ws.send(JSON.stringify(['EVENT', m[1], { id: 'a' }]));
          ws.send(JSON.stringify(['EVENT', 'other', { id: 'z' }]));
          ws.send(JSON.stringify(['EVENT', m[1], { id: 'b' }]));
          ws.send(JSON.stringify(m[1] === 'refuse' ? ['CLOSED', m[1], 'invalid: no'] : ['EOSE', m[1]]));
        } else if (m[0] === 'EVENT') {
          ws.send(JSON.stringify(['OK', 'other-id', false, '']));
          ws.send(JSON.stringify(['OK', m[1].id, true, '']));
        } else if (m[0] === 'BROKEN') {
          ws.send('["OK","x",false,"cut off');
        } else if (m[0] === 'BYE') {
          ws.close(1000, 'bye');
        }
      });
    });
    await new Promise((r) => wss.once('listening', r));
    url = `ws://127.0.0.1:${wss.address().port}`;
  });
  after(() => new Promise((r) => wss.close(r)));

  it('reads X-Relay-Worker from the handshake', async () => {
    const c = await Client.open(url);
    assert.equal(c.worker, 7);
    await c.end();
  });

  it('refuses to connect anywhere but 127.0.0.1', () => {
    assert.throws(() => Client.open('ws://localhost:1'), /127\.0\.0\.1/);
  });

  it('req() collects its own events until EOSE and leaves the rest', async () => {
    const c = await Client.open(url);
    const r = await c.req('s1', {});
    assert.deepEqual(r, { events: [{ id: 'a' }, { id: 'b' }], eose: true, closed: null });
    assert.deepEqual(c.take(), [['NOTICE', 'unrelated'], ['EVENT', 'other', { id: 'z' }]]);
    await c.end();
  });

  it('req() reports CLOSED', async () => {
    const c = await Client.open(url);
    const r = await c.req('refuse', {});
    assert.equal(r.eose, false);
    assert.equal(r.closed, 'invalid: no');
    await c.end();
  });

  it('publish() waits for the OK naming its id', async () => {
    const c = await Client.open(url);
    const r = await c.publish({ id: 'abc' });
    assert.deepEqual([r.id, r.ok], ['abc', true]);
    await c.end();
  });

  it('waitFor() times out with the unmatched frames in the message', async () => {
    const c = await Client.open(url);
    c.send(['REQ', 'x']);
    await assert.rejects(c.waitFor((m) => m[0] === 'NEVER', { timeout: 200, what: 'NEVER' }),
      new RegExp(`timed out after ${waitBound(200)} ms waiting for NEVER; unmatched frames: .*unrelated`));
    await c.end();
  });

  it('waitFor() fails at once when the server closes', async () => {
    const c = await Client.open(url);
    c.send(['BYE']);
    const t0 = Date.now();
    await assert.rejects(c.waitFor(() => false, { timeout: 3000 }), /connection closed \(code 1000 "bye"\)/);
    assert.ok(Date.now() - t0 < 2000);
  });

  it('a wait fails at once on a frame that is not valid JSON', async () => {
    const c = await Client.open(url);
    c.send(['BROKEN']);
    const t0 = Date.now();
    await assert.rejects(c.okFor('x', { timeout: 3000 }), /not valid JSON.*cut off/);
    assert.ok(Date.now() - t0 < 2000);
    await c.end();
  });

  it('keeps frames that are not JSON, with the text', async () => {
    const c = await Client.open(url);
    c.send('garbage');
    const m = await c.next({ timeout: 1000 });
    assert.equal(m.invalidJson, 'not json {');
    await c.end();
  });
});
