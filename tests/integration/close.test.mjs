/*
 * close.test.mjs - nothing after a Close (RFC 6455 5.5.1): for each way the
 * relay ends a websocket, a raw client (node:net, handshake by hand, masked
 * frames) records every frame the relay sends until the TCP connection
 * ends, and the Close frame, where there is one, must be the last.
 *   1007: invalid UTF-8 sent with the handshake (the AUTH challenge is
 *         queued then), and sent with a REQ in flight and a live
 *         subscription receiving events while the close waits for its ack.
 *   1002: a frame with reserved bits set, with the same REQ and deliveries.
 *   1000: the client's own Close, echoed, with deliveries after it.
 *   1008: a client past rate_limit_strikes, with a live subscription.
 *   The slow reader dropped at max_outbound_bytes, and a worker's SIGTERM:
 *   no Close frame, and the TCP connection ends.
 * Every NIP-42 connection gets its AUTH challenge on connect (ws.c), so the
 * challenge is queued on each of them.  The raw client never answers a
 * Close, so the relay keeps the connection until its own close timeout:
 * frames queued in that window are what this file looks for.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect as netConnect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { useRelay, until, HOST } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const OP_TEXT = 1;
const OP_CLOSE = 8;
/* The relay's close timeout is 5 s; a busy machine gets three times that. */
const END_TIMEOUT_MS = 15000;

/* One masked frame: first byte b0 (FIN, RSV and opcode), payload bytes. */
function frame(b0, payload) {
  const mask = randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([b0, 0x80 | len]) : Buffer.from([b0, 0x80 | 126, len >> 8, len & 255]);
  const body = Buffer.from(payload);
  for (let i = 0; i < len; i++) body[i] ^= mask[i & 3];
  return Buffer.concat([head, mask, body]);
}

const text = (value) => frame(0x80 | OP_TEXT, Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)));
/* A text frame whose payload is not UTF-8 (0xff never is). */
const badUtf8 = () => frame(0x80 | OP_TEXT, Buffer.from([0x5b, 0xff, 0xfe, 0x5d]));
/* A text frame with RSV1 set, which no extension was negotiated for. */
const rsvSet = () => frame(0xc0 | OP_TEXT, Buffer.from('["REQ","r",{}]'));
const closeFrame = (code) => frame(0x80 | OP_CLOSE, Buffer.from([code >> 8, code & 255]));

/* A websocket client that keeps every frame the server sends, in order,
 * and notes when the TCP connection ends.  It never answers a Close. */
class RawClient {
  static open(port, { withHandshake = Buffer.alloc(0) } = {}) {
    return new Promise((resolve, reject) => {
      const c = new RawClient();
      c.socket = netConnect(port, HOST);
      const timer = setTimeout(() => reject(new Error('no websocket handshake within 5 s')), 5000);
      c.socket.once('error', reject);
      c.socket.on('connect', () => {
        const key = randomBytes(16).toString('base64');
        const req = `GET / HTTP/1.1\r\nHost: ${HOST}:${port}\r\nUpgrade: websocket\r\n` +
          `Connection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`;
        c.socket.write(Buffer.concat([Buffer.from(req), withHandshake]));
      });
      c.socket.on('data', (d) => c.#take(d, () => { clearTimeout(timer); resolve(c); }));
      c.socket.on('error', () => {});
      c.ended = new Promise((r) => c.socket.once('close', () => { clearTimeout(timer); r(); }));
      c.ended.then(() => { c.isEnded = true; reject(new Error('connection ended before the handshake')); });
    });
  }

  constructor() {
    this.buf = Buffer.alloc(0);
    this.upgraded = false;
    this.frames = []; /* {op, text} or {op: OP_CLOSE, code, reason} */
    this.isEnded = false;
  }

  #take(data, onUpgrade) {
    this.buf = Buffer.concat([this.buf, data]);
    if (!this.upgraded) {
      const at = this.buf.indexOf('\r\n\r\n');
      if (at < 0) return;
      assert.match(this.buf.subarray(0, at).toString(), /^HTTP\/1\.1 101 /);
      this.upgraded = true;
      this.buf = this.buf.subarray(at + 4);
      onUpgrade();
    }
    for (;;) {
      if (this.buf.length < 2) return;
      let len = this.buf[1] & 0x7f;
      let at = 2;
      if (len === 126) {
        if (this.buf.length < 4) return;
        len = this.buf.readUInt16BE(2);
        at = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) return;
        len = Number(this.buf.readBigUInt64BE(2));
        at = 10;
      }
      if (this.buf.length < at + len) return;
      const op = this.buf[0] & 0x0f;
      const payload = this.buf.subarray(at, at + len);
      this.buf = this.buf.subarray(at + len);
      if (op === OP_CLOSE)
        this.frames.push({ op, code: len >= 2 ? payload.readUInt16BE(0) : null, reason: payload.subarray(2).toString() });
      else
        this.frames.push({ op, text: payload.toString() });
    }
  }

  send(bytes) {
    this.socket.write(bytes);
  }

  /* The JSON messages received so far. */
  messages() {
    return this.frames.filter((f) => f.op === OP_TEXT).map((f) => JSON.parse(f.text));
  }

  /* Waits for a text frame for which match(message) is true. */
  async waitFor(match, what) {
    await until(() => this.messages().some(match) || this.isEnded, { timeout: 5000, what });
    assert.ok(this.messages().some(match), `the connection ended before ${what}`);
  }

  async waitClose(what = 'a Close frame') {
    await until(() => this.frames.some((f) => f.op === OP_CLOSE) || this.isEnded, { timeout: 5000, what });
  }

  /* Waits for the TCP end (bounded) and returns every frame received. */
  async end() {
    let timer;
    const ended = await Promise.race([
      this.ended.then(() => true),
      new Promise((r) => { timer = setTimeout(() => r(false), END_TIMEOUT_MS); }),
    ]);
    clearTimeout(timer);
    if (!ended) this.socket.destroy();
    assert.ok(ended, `the relay kept the connection open ${END_TIMEOUT_MS} ms`);
    return this.frames;
  }

  destroy() {
    this.socket.destroy();
  }
}

function describeFrames(frames) {
  return frames.map((f) => (f.op === OP_CLOSE ? `Close ${f.code} ${f.reason}` : `op ${f.op} ${f.text?.slice(0, 60)}`)).join(' | ');
}

/* The relay's frames end with a Close of code (or, with code null, no
 * Close at all), and nothing follows it. */
function assertClosedWith(frames, code) {
  const at = frames.findIndex((f) => f.op === OP_CLOSE);
  if (code === null) {
    assert.equal(at, -1, `a Close frame came: ${describeFrames(frames)}`);
    return;
  }
  assert.notEqual(at, -1, `no Close frame came: ${describeFrames(frames)}`);
  assert.equal(frames[at].code, code, describeFrames(frames));
  assert.equal(at, frames.length - 1, `frames came after the Close: ${describeFrames(frames)}`);
}

/* A raw client with its AUTH challenge and a live subscription "live" to
 * kind 1 (EOSE seen). */
async function subscribed(relay) {
  const c = await RawClient.open(relay.port);
  await c.waitFor((m) => m[0] === 'AUTH', 'the AUTH challenge');
  c.send(text(['REQ', 'live', { kinds: [1], limit: 0 }]));
  await c.waitFor((m) => m[0] === 'EOSE' && m[1] === 'live', 'EOSE of "live"');
  return c;
}

/* Publishes n events of kind 1 and waits until a watcher on the same worker
 * got each live: the raw client's subscription was offered them too. */
async function deliverWhileClosing(relay, watcher, n = 3) {
  const kp = keypair();
  for (let i = 0; i < n; i++) {
    const ev = signed(kp.sk, { content: `after the close ${i}` });
    assert.equal((await watcher.publish(ev)).ok, true);
    await watcher.liveEvent('w', ev.id, { timeout: 5000 });
  }
}

async function watcherOf(relay) {
  const w = await relay.connect();
  assert.equal((await w.req('w', { kinds: [1], limit: 0 })).eose, true);
  return w;
}

describe('nothing after a Close', () => {
  const relay = useRelay({ workers: 1, config: { max_outbound_bytes: 65536, auth_challenge: 'connect' } });

  it('1007 for invalid UTF-8 sent with the handshake, after the AUTH challenge or without it', async () => {
    for (let i = 0; i < 5; i++) {
      const c = await RawClient.open(relay.port, { withHandshake: badUtf8() });
      assertClosedWith(await c.end(), 1007);
    }
  });

  for (const [name, code, bad] of [
    ['1007 for invalid UTF-8', 1007, badUtf8],
    ['1002 for a frame with reserved bits set', 1002, rsvSet],
  ]) {
    it(`${name}: no reply, EOSE or live event after it`, async () => {
      const watcher = await watcherOf(relay);
      const c = await subscribed(relay);
      /* The REQ's answer comes from stored after the close began. */
      c.send(Buffer.concat([text(['REQ', 'late', { kinds: [1] }]), bad()]));
      await c.waitClose();
      await deliverWhileClosing(relay, watcher);
      assertClosedWith(await c.end(), code);
    });
  }

  it('1000 echoing the client\'s Close: no live event after it', async () => {
    const watcher = await watcherOf(relay);
    const c = await subscribed(relay);
    c.send(Buffer.concat([text(['REQ', 'late', { kinds: [1] }]), closeFrame(1000)]));
    await c.waitClose();
    await deliverWhileClosing(relay, watcher);
    assertClosedWith(await c.end(), 1000);
  });

  it('the slow reader dropped at max_outbound_bytes: no Close, and the TCP connection ends', async () => {
    const watcher = await watcherOf(relay);
    const c = await subscribed(relay);
    const mark = relay.mark();
    const log = () => relay.logs(mark);
    c.socket.pause(); /* the kernel's buffers fill, then the relay's queue */
    const kp = keypair();
    const content = 'x'.repeat(60000);
    for (let i = 0; i < 200 && !/bytes queued and not read/.test(log()); i++)
      assert.equal((await watcher.publish(signed(kp.sk, { content: `${i} ${content}` }))).ok, true);
    assert.match(log(), /bytes queued and not read/);
    c.socket.resume();
    assertClosedWith(await c.end(), null);
  });
});

describe('nothing after a Close for rate limit strikes', () => {
  const relay = useRelay({
    workers: 1,
    config: { limit_loopback: 1, events_per_second: 1, events_burst: 2, rate_limit_strikes: 3,
      auth_challenge: 'connect' },
  });

  it('1008 with a live subscription, and nothing after it', async () => {
    const c = await subscribed(relay);
    const kp = keypair();
    const flood = [];
    for (let i = 0; i < 20; i++) flood.push(text(['EVENT', signed(kp.sk, { content: `flood ${i}` })]));
    c.send(Buffer.concat(flood));
    assertClosedWith(await c.end(), 1008);
  });
});

describe('nothing after a Close when a worker stops', () => {
  const relay = useRelay({ workers: 1, config: { auth_challenge: 'connect' } });

  it('SIGTERM: the TCP connection ends with no frame after a Close', async () => {
    const c = await subscribed(relay);
    await relay.kill(1, 'SIGTERM', { wait: true });
    const frames = await c.end();
    const at = frames.findIndex((f) => f.op === OP_CLOSE);
    assert.ok(at === -1 || at === frames.length - 1, describeFrames(frames));
  });
});
