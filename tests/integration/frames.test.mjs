/*
 * frames.test.mjs - websocket frames against max_message_bytes, spoken by
 * hand over a raw TCP socket: a frame whose header announces 2^62 bytes,
 * and a fragmented message whose frames add up past the limit, each get a
 * Close frame with 1009 and the end of the stream, and nothing after the
 * Close; a message just under the limit, whole or in fragments, is served;
 * each refusal is counted in relay_worker_too_big_closed_total.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { itStopsCleanly, useRelay, until, HOST } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';
import { metricValue } from './lib/metrics.mjs';
import { clientFrame, masked, serverFrames } from './lib/frames.mjs';

const MAX = 16384;
const WAIT_MS = 10000;

/* A websocket opened by hand: .write(bytes), .frames(), .ended (resolves
 * when the relay ends the stream). */
async function rawSocket(port) {
  const sock = connect({ host: HOST, port });
  let got = Buffer.alloc(0);
  const ended = new Promise((resolve) => sock.on('close', resolve));
  sock.on('error', () => {}); /* a reset after the Close is an end too */
  sock.on('data', (d) => { got = Buffer.concat([got, d]); });
  await new Promise((resolve) => sock.once('connect', resolve));
  sock.write('GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n');
  await until(() => got.includes('\r\n\r\n'), { timeout: WAIT_MS, what: 'the upgrade' });
  const headEnd = () => got.indexOf('\r\n\r\n') + 4;
  return {
    sock,
    ended,
    write: (bytes) => { if (!sock.destroyed) sock.write(bytes); },
    frames: () => serverFrames(got.subarray(headEnd())),
  };
}

/* Waits for the Close frame and the end of the stream; returns the close
 * code and checks that no frame followed the Close. */
async function closedWith(raw) {
  await until(() => raw.frames().some((f) => f.opcode === 8),
    { timeout: WAIT_MS, what: 'a Close frame' });
  const timer = new Promise((_, reject) => setTimeout(
    () => reject(new Error('the stream did not end after the Close')), WAIT_MS));
  await Promise.race([raw.ended, timer]);
  const frames = raw.frames();
  const at = frames.findIndex((f) => f.opcode === 8);
  assert.equal(at, frames.length - 1, 'frames came after the Close');
  assert.ok(frames[at].payload.length >= 2, 'the Close has a status code');
  return frames[at].payload.readUInt16BE(0);
}

describe('frames over max_message_bytes', () => {
  const relay = useRelay({ workers: 1, config: { max_message_bytes: MAX } });

  const counted = async () => metricValue((await relay.httpGet('/metrics')).body,
    'relay_worker_too_big_closed_total{') ?? 0;

  it('a frame announcing 2^62 bytes gets Close 1009 and the end of the stream', async () => {
    const raw = await rawSocket(relay.port);
    const frame = clientFrame({ payload: Buffer.alloc(4096, 0x61), declared: 2n ** 62n });
    raw.write(frame.subarray(0, 14)); /* the header alone, then some of its payload */
    raw.write(frame.subarray(14));
    raw.write(masked(Buffer.alloc(4096, 0x61), 4096));
    assert.equal(await closedWith(raw), 1009);
    await until(async () => (await counted()) >= 1, { timeout: WAIT_MS, what: 'the refusal counted' });
  });

  it('fragments whose lengths add up past the limit get Close 1009', async () => {
    const raw = await rawSocket(relay.port);
    const part = Buffer.alloc(6000, 0x61);
    raw.write(clientFrame({ fin: false, opcode: 1, payload: part }));
    raw.write(clientFrame({ fin: false, opcode: 0, payload: part }));
    raw.write(clientFrame({ fin: true, opcode: 0, payload: part })); /* 18000 bytes */
    assert.equal(await closedWith(raw), 1009);
    await until(async () => (await counted()) >= 2, { timeout: WAIT_MS, what: 'both refusals counted' });
  });

  it('a message just under the limit is served, whole and in fragments', async () => {
    const kp = keypair();
    const c = await relay.connect();
    const bare = JSON.stringify(['EVENT', signed(kp.sk, { content: '' })]).length;
    const ev = signed(kp.sk, { content: 'x'.repeat(MAX - bare - 16) });
    assert.ok(JSON.stringify(['EVENT', ev]).length <= MAX);
    assert.equal((await c.publish(ev)).ok, true);

    const raw = await rawSocket(relay.port);
    const req = Buffer.from(`["REQ","frag",{"ids":["${ev.id}"]}]`);
    const pad = Buffer.alloc(MAX - req.length - 1, 0x20); /* JSON allows the spaces */
    raw.write(clientFrame({ fin: false, opcode: 1, payload: req.subarray(0, 7) }));
    raw.write(clientFrame({ fin: false, opcode: 0, payload: pad }));
    raw.write(clientFrame({ fin: true, opcode: 0, payload: req.subarray(7) }));
    await until(() => raw.frames().some((f) => f.payload.includes('["EOSE","frag"]')),
      { timeout: WAIT_MS, what: 'EOSE for the fragmented REQ' });
    assert.ok(raw.frames().some((f) => f.payload.includes(ev.id)), 'the event came back');
    raw.sock.destroy();
    assert.equal(await counted(), 2, 'a message under the limit was counted as too big');
  });

  itStopsCleanly(relay);
});
