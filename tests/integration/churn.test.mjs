/*
 * churn.test.mjs - 10,000 websocket connections opened and dropped (half
 * closed politely, half cut off mid-stream without a close frame), plus
 * half-open TCP connections that never finish the handshake; afterwards
 * the workers' connection counts return to zero and a fresh client is
 * served normally.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import WebSocket from 'ws';
import { useRelay, until, HOST } from './lib/relay.mjs';
import { metricValue } from './lib/metrics.mjs';
import { keypair, signed } from './lib/client.mjs';

function openOne(url) {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { handshakeTimeout: 5000 });
    ws.once('open', () => resolve(ws));
    ws.once('error', () => resolve(null));
  });
}

describe('connection churn', () => {
  const relay = useRelay({ workers: 2 });

  it('survives 10,000 connections opened and dropped, then serves a fresh client', async () => {
    const batch = 250;
    let opened = 0;
    for (let round = 0; round < 10000 / batch; round++) {
      const socks = (await Promise.all(Array.from({ length: batch }, () => openOne(relay.url)))).filter(Boolean);
      opened += socks.length;
      socks.forEach((ws, i) => {
        if (i % 2) {
          ws.send('["REQ","s",{"limit":1}]');
          ws.terminate(); /* abrupt: no close frame */
        } else {
          ws.close();
        }
      });
    }
    assert.ok(opened >= 9900, `only ${opened} of 10000 connections opened`);
    /* Half-open: TCP connections that never send a handshake. */
    const raw = await Promise.all(Array.from({ length: 50 }, () => new Promise((resolve) => {
      const s = connect(relay.port, HOST, () => resolve(s));
      s.on('error', () => resolve(null));
    })));
    raw.forEach((s) => s && s.destroy());
    await until(async () => metricValue((await relay.httpGet('/metrics')).body, 'relay_worker_connections{') === 0,
      { timeout: 15000, interval: 500, what: 'every worker back to 0 connections' });
    const c = await relay.connect();
    const ev = signed(keypair().sk, { content: 'after the churn' });
    assert.equal((await c.publish(ev)).ok, true);
    assert.equal((await c.req('x', { ids: [ev.id] })).events.length, 1);
  });
});
