/*
 * deflate.test.mjs - permessage-deflate (RFC 7692) with ws_deflate = 1:
 * the handshake's answer to offers written as data (several offers,
 * client_max_window_bits with and without a value, refused parameters);
 * node `ws` with deflate publishing, reading histories and receiving live
 * events both ways; on a socket spoken by hand, compressed frames (RSV1)
 * for events and plain ones for short replies, a live event compressed
 * once for every deflate recipient, compressed and fragmented client
 * messages; a bomb closed with 1009, malformed data with 1007, RSV1 on a
 * continuation with 1002.  A client that offers nothing, or a relay with
 * ws_deflate = 0, gets no extension and plain frames, as before.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { deflateRawSync, inflateRawSync, constants as zc } from 'node:zlib';
import { itStopsCleanly, useRelay, until, HOST } from './lib/relay.mjs';
import { keypair, signed, isArray } from './lib/client.mjs';
import { clientFrame, serverFrames } from './lib/frames.mjs';

const MAX = 16384;
const WAIT_MS = 10000;
const ANSWER = 'permessage-deflate; server_no_context_takeover; client_no_context_takeover';

/* A message as RFC 7692 sends it: raw deflate, the sync flush's tail cut. */
function compress(text) {
  const out = deflateRawSync(Buffer.from(text), { finishFlush: zc.Z_SYNC_FLUSH });
  return out.subarray(0, out.length - 4);
}

function inflate(payload) {
  return inflateRawSync(Buffer.concat([payload, Buffer.from([0, 0, 0xff, 0xff])]),
    { finishFlush: zc.Z_SYNC_FLUSH }).toString();
}

/* The server's whole frames in buf, each with its text (inflated when
 * rsv1 is set) for a text frame, or null. */
function serverFramesText(buf) {
  return serverFrames(buf).map((f) => ({ ...f,
    text: f.opcode === 1 ? (f.rsv1 ? inflate(f.payload) : f.payload.toString()) : null }));
}

/* A websocket by hand offering offer (none when null): .answer (the
 * Sec-WebSocket-Extensions value or null), .write(), .frames(), .ended. */
async function rawSocket(port, offer) {
  const sock = connect({ host: HOST, port });
  let got = Buffer.alloc(0);
  const ended = new Promise((resolve) => sock.on('close', resolve));
  sock.on('error', () => {});
  sock.on('data', (d) => { got = Buffer.concat([got, d]); });
  await new Promise((resolve) => sock.once('connect', resolve));
  sock.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n' +
    (offer === null ? '' : `Sec-WebSocket-Extensions: ${offer}\r\n`) + '\r\n');
  await until(() => got.includes('\r\n\r\n'), { timeout: WAIT_MS, what: 'the upgrade' });
  const headEnd = got.indexOf('\r\n\r\n') + 4;
  const head = got.subarray(0, headEnd).toString();
  const m = /\r\nsec-websocket-extensions: *([^\r]*)\r\n/i.exec(head);
  return {
    status: Number(head.split(' ')[1]),
    answer: m ? m[1] : null,
    ended,
    sock,
    write: (bytes) => { if (!sock.destroyed) sock.write(bytes); },
    frames: () => serverFramesText(got.subarray(headEnd)),
    send(text, { compressed = true } = {}) {
      this.write(clientFrame({ rsv1: compressed, payload: compressed ? compress(text) : Buffer.from(text) }));
    },
    async waitText(pred, what) {
      await until(() => this.frames().some((f) => f.text !== null && pred(f.text)), { timeout: WAIT_MS, what });
      return this.frames().find((f) => f.text !== null && pred(f.text));
    },
  };
}

/* The close code of raw's Close frame, once the stream has ended. */
async function closedWith(raw) {
  await until(() => raw.frames().some((f) => f.opcode === 8), { timeout: WAIT_MS, what: 'a Close frame' });
  await Promise.race([raw.ended, new Promise((_, reject) =>
    setTimeout(() => reject(new Error('the stream did not end after the Close')), WAIT_MS))]);
  const close = raw.frames().find((f) => f.opcode === 8);
  if (process.env.DEFL_DEBUG) console.error("close", close.payload.toString("latin1"));
  return close.payload.readUInt16BE(0);
}

const content = (n) => 'a nostr note that repeats itself, '.repeat(n);

/* [the offer, the answer expected (null: declined)] */
const OFFERS = [
  ['permessage-deflate', ANSWER],
  ['permessage-deflate; client_max_window_bits', ANSWER],
  ['permessage-deflate; client_max_window_bits=10', ANSWER],
  ['permessage-deflate; client_no_context_takeover; server_no_context_takeover', ANSWER],
  ['permessage-deflate; server_max_window_bits=15', `${ANSWER}; server_max_window_bits=15`],
  ['permessage-deflate; server_max_window_bits=10', null],
  ['permessage-deflate; server_max_window_bits=10, permessage-deflate; client_max_window_bits', ANSWER],
  ['permessage-deflate, permessage-deflate; client_max_window_bits', ANSWER],
  ['permessage-deflate; client_max_window_bits=16', null],
  ['permessage-deflate; server_no_context_takeover=1', null],
  ['permessage-deflate; no_such_parameter', null],
  ['x-webkit-deflate-frame', null],
];

describe('permessage-deflate with ws_deflate = 1', () => {
  const relay = useRelay({ workers: 1, config: { ws_deflate: 1, max_message_bytes: MAX } });

  for (const [offer, answer] of OFFERS) {
    it(`answers ${JSON.stringify(offer)} with ${JSON.stringify(answer)}`, async () => {
      const raw = await rawSocket(relay.port, offer);
      assert.equal(raw.status, 101);
      assert.equal(raw.answer, answer);
      raw.sock.destroy();
    });
  }

  it('node ws with deflate publishes, reads history and gets live events both ways', async () => {
    const kp = keypair();
    const opts = { perMessageDeflate: { threshold: 0 } };
    const a = await relay.connect(opts), b = await relay.connect(opts);
    assert.equal(a.extensions, ANSWER);
    const old = await a.mustPublish(signed(kp.sk, { content: content(30) }));
    const hist = await b.req('h', { ids: [old.id] });
    assert.deepEqual(hist.events, [old]);
    assert.equal((await b.req('live', { authors: [kp.pk], limit: 0 })).eose, true);
    const ev = await a.mustPublish(signed(kp.sk, { content: content(40) }));
    assert.deepEqual(await b.liveEvent('live', ev.id), ev);
    const back = await b.mustPublish(signed(kp.sk, { content: `${content(5)} back` }));
    assert.equal((await b.liveEvent('live', back.id)).id, back.id);
  });

  it('a client offering nothing gets no extension and plain frames', async () => {
    const kp = keypair();
    const c = await relay.connect({ perMessageDeflate: false });
    assert.equal(c.extensions, null);
    const ev = await c.mustPublish(signed(kp.sk, { content: content(30) }));
    const raw = await rawSocket(relay.port, null);
    assert.equal(raw.answer, null);
    raw.send(`["REQ","p",{"ids":["${ev.id}"]}]`, { compressed: false });
    await raw.waitText((t) => t === '["EOSE","p"]', 'EOSE');
    for (const f of raw.frames()) assert.equal(f.rsv1, false);
    assert.deepEqual(JSON.parse(raw.frames()[0].text), ['EVENT', 'p', ev]);
    raw.sock.destroy();
  });

  it('events go compressed, short replies plain, and a compressed REQ is served', async () => {
    const kp = keypair();
    const c = await relay.connect();
    const ev = await c.mustPublish(signed(kp.sk, { content: content(30) }));
    const raw = await rawSocket(relay.port, 'permessage-deflate');
    raw.send(`["REQ","z",{"ids":["${ev.id}"]}]`);
    const eose = await raw.waitText((t) => t === '["EOSE","z"]', 'EOSE');
    assert.equal(eose.rsv1, false, 'EOSE is under ws_deflate_min_bytes');
    const event = raw.frames().find((f) => f.text.startsWith('["EVENT"'));
    assert.equal(event.rsv1, true);
    assert.ok(event.payload.length < event.text.length / 2, `${event.payload.length} bytes`);
    assert.deepEqual(JSON.parse(event.text), ['EVENT', 'z', ev]);
    raw.sock.destroy();
  });

  it('a live event is compressed once for all deflate recipients', async () => {
    const kp = keypair();
    const subs = ['first', 'a-longer-subscription-id'];
    const raws = [];
    for (const sub of subs) {
      const raw = await rawSocket(relay.port, 'permessage-deflate; client_max_window_bits');
      raw.send(`["REQ","${sub}",{"authors":["${kp.pk}"],"limit":0}]`);
      await raw.waitText((t) => t === `["EOSE","${sub}"]`, 'EOSE');
      raws.push(raw);
    }
    const plain = await relay.connect({ perMessageDeflate: false });
    await plain.req('plain', { authors: [kp.pk], limit: 0 });
    const pub = await relay.connect();
    const ev = await pub.mustPublish(signed(kp.sk, { content: content(50) }));
    assert.deepEqual(await plain.liveEvent('plain', ev.id), ev);
    const shared = [];
    for (const [i, raw] of raws.entries()) {
      const f = await raw.waitText((t) => t.includes(ev.id), 'the live event');
      assert.equal(f.rsv1, true);
      assert.deepEqual(JSON.parse(f.text), ['EVENT', subs[i], ev]);
      /* A stored block of the prefix (5 + its length), then the shared part. */
      const prefix = Buffer.from(`["EVENT","${subs[i]}",`);
      assert.equal(f.payload[0], 0);
      assert.equal(f.payload.readUInt16LE(1), prefix.length);
      assert.deepEqual(f.payload.subarray(5, 5 + prefix.length), prefix);
      shared.push(f.payload.subarray(5 + prefix.length));
      raw.sock.destroy();
    }
    assert.deepEqual(shared[0], shared[1]);
  });

  it('a compressed EVENT in fragments is taken', async () => {
    const kp = keypair();
    const ev = signed(kp.sk, { content: content(20) });
    const z = compress(JSON.stringify(['EVENT', ev]));
    const raw = await rawSocket(relay.port, 'permessage-deflate');
    const cut = z.length >> 1;
    raw.write(clientFrame({ fin: false, rsv1: true, payload: z.subarray(0, cut) }));
    raw.write(clientFrame({ fin: true, opcode: 0, payload: z.subarray(cut) }));
    const ok = await raw.waitText((t) => t.startsWith('["OK"'), 'OK');
    assert.deepEqual(JSON.parse(ok.text), ['OK', ev.id, true, '']);
    raw.send('["CLOSE","none"]', { compressed: false }); /* plain messages still pass */
    raw.send(`["REQ","r",{"ids":["${ev.id}"]}]`);
    await raw.waitText((t) => t.includes(ev.id), 'the event read back');
    raw.sock.destroy();
  });

  it('a bomb closes with 1009 and the relay serves the next client', async () => {
    const raw = await rawSocket(relay.port, 'permessage-deflate');
    const bomb = compress(`["EVENT",${' '.repeat(8 << 20)}]`);
    assert.ok(bomb.length < MAX);
    raw.write(clientFrame({ rsv1: true, payload: bomb }));
    assert.equal(await closedWith(raw), 1009);
    const c = await relay.connect();
    assert.equal((await c.req('after', { limit: 1 })).eose, true);
  });

  it('compressed bytes past max_message_bytes close with 1009', async () => {
    const raw = await rawSocket(relay.port, 'permessage-deflate');
    raw.write(clientFrame({ rsv1: true, payload: Buffer.alloc(MAX + 1, 0x07) }));
    assert.equal(await closedWith(raw), 1009);
  });

  /* [what, frames] */
  const MALFORMED = [
    ['a reserved block type', [{ rsv1: true, payload: Buffer.from([0xff, 0xff, 0xff]) }], 1007],
    ['a stored block whose lengths disagree', [{ rsv1: true, payload: Buffer.from([0, 5, 0, 0, 0, 0x41]) }], 1007],
    ['invalid UTF-8 once inflated', [{ rsv1: true, payload: compress(Buffer.from([0x5b, 0xc3, 0x28, 0x5d])) }], 1007],
    ['UTF-8 cut at the end', [{ rsv1: true, payload: compress(Buffer.from([0x5b, 0x22, 0xe2, 0x82])) }], 1007],
    ['RSV1 on a continuation', [
      { fin: false, rsv1: true, payload: compress('["REQ",') },
      { fin: true, rsv1: true, opcode: 0, payload: compress('"x",{}]') }], 1002],
  ];
  for (const [what, frames, code] of MALFORMED) {
    it(`${what} closes with ${code}`, async () => {
      const raw = await rawSocket(relay.port, 'permessage-deflate');
      for (const f of frames) raw.write(clientFrame(f));
      assert.equal(await closedWith(raw), code);
    });
  }

  itStopsCleanly(relay);
});

describe('permessage-deflate with ws_deflate = 0', () => {
  const relay = useRelay({ workers: 1, config: { ws_deflate: 0 } });

  it('declines every offer and sends plain frames', async () => {
    const c = await relay.connect({ perMessageDeflate: { threshold: 0 } });
    assert.equal(c.extensions, null);
    const kp = keypair();
    const ev = await c.mustPublish(signed(kp.sk, { content: content(30) }));
    const raw = await rawSocket(relay.port, 'permessage-deflate; client_max_window_bits');
    assert.equal(raw.answer, null);
    raw.send(`["REQ","p",{"ids":["${ev.id}"]}]`, { compressed: false });
    await raw.waitText((t) => t === '["EOSE","p"]', 'EOSE');
    for (const f of raw.frames()) assert.equal(f.rsv1, false);
    raw.sock.destroy();
  });

  it('a compressed frame is refused as before (RSV1 without an extension)', async () => {
    const raw = await rawSocket(relay.port, 'permessage-deflate');
    raw.send('["REQ","x",{}]');
    assert.equal(await closedWith(raw), 1002);
  });

  itStopsCleanly(relay);
});
