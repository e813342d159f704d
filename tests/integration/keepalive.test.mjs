/*
 * keepalive.test.mjs - websocket pings (ping_interval): an idle client is
 * pinged, and one that answers (with a pong or any message) stays connected
 * across several intervals; one that never answers is closed after a
 * second interval; a client's own ping gets a pong.  Both outcomes are
 * counted in /metrics.
 * ping_interval is 4 s here, so each wait is a few intervals; every wait
 * is bounded generously for a busy machine.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import WebSocket from 'ws';
import { useRelay, until } from './lib/relay.mjs';
import { metricValue } from './lib/metrics.mjs';

const INTERVAL_S = 4;
const WAIT_MS = 20000;

/* Resolves with the event's arguments when emitter emits name, rejects
 * after ms. */
function once(emitter, name, ms, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    emitter.once(name, (...args) => { clearTimeout(timer); resolve(args); });
  });
}

async function open(relay, options = {}) {
  const ws = new WebSocket(relay.url, options);
  await once(ws, 'open', WAIT_MS, 'websocket handshake');
  return ws;
}

/* Worker 1's counters as relayctl workers reports them. */
async function ctlWorker(relay) {
  return JSON.parse((await relay.relayctl('workers', '--json')).stdout).worker_list[0];
}

async function metric(relay, name) {
  return metricValue((await relay.httpGet('/metrics')).body, `${name}{worker="1"}`);
}

describe('websocket keepalive', () => {
  const relay = useRelay({ workers: 1, config: { ping_interval: INTERVAL_S } });

  it('pings an idle client, which stays connected while it answers', async () => {
    const ws = await open(relay);
    let pings = 0;
    let closed = false;
    ws.on('ping', () => { pings++; });
    ws.on('close', () => { closed = true; });
    try {
      await once(ws, 'ping', WAIT_MS, 'ping from the relay');
      /* Three more pings span three intervals, each past a hangup. */
      await until(() => pings >= 4 || closed, { timeout: WAIT_MS * 2, what: 'four pings' });
      assert.equal(closed, false, 'a client answering pings stays connected');
      assert.equal(ws.readyState, WebSocket.OPEN);
      await until(async () => await metric(relay, 'relay_worker_pings_sent_total') >= 4,
        { timeout: WAIT_MS, what: 'relay_worker_pings_sent_total >= 4' });
    } finally {
      ws.terminate();
    }
  });

  it('closes a client that does not answer its pings', async () => {
    const before = await metric(relay, 'relay_worker_ping_timeouts_total') ?? 0;
    const ws = await open(relay, { autoPong: false });
    const closed = once(ws, 'close', WAIT_MS * 2, 'close of the silent client');
    await once(ws, 'ping', WAIT_MS, 'ping from the relay');
    await closed;
    await until(async () => await metric(relay, 'relay_worker_ping_timeouts_total') > before,
      { timeout: WAIT_MS, what: 'relay_worker_ping_timeouts_total to grow' });
    const w = await ctlWorker(relay);
    assert.ok(w.ping_timeouts >= 1, `relayctl workers: ${JSON.stringify(w)}`);
    assert.ok(w.pings_sent >= 1, `relayctl workers: ${JSON.stringify(w)}`);
  });

  it('keeps a client that answers pings with messages instead of pongs', async () => {
    const ws = await open(relay, { autoPong: false });
    let pings = 0;
    let closed = false;
    ws.on('ping', () => { pings++; ws.send(JSON.stringify(['CLOSE', `ka${pings}`])); });
    ws.on('close', () => { closed = true; });
    try {
      await until(() => pings >= 3 || closed, { timeout: WAIT_MS * 2, what: 'three pings' });
      assert.equal(closed, false, 'a message counts as an answer');
    } finally {
      ws.terminate();
    }
  });

  it("answers a client's ping with a pong carrying its payload", async () => {
    const ws = await open(relay);
    try {
      const pong = once(ws, 'pong', WAIT_MS, 'pong from the relay');
      ws.ping(Buffer.from('are you there'));
      const [data] = await pong;
      assert.equal(data.toString(), 'are you there');
    } finally {
      ws.terminate();
    }
  });
});
