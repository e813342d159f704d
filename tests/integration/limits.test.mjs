/*
 * limits.test.mjs - per-address limits (limit_loopback = 1 so they apply to
 * the test's 127.0.0.1): connections past max_connections_per_ip are
 * refused; EVENTs past the burst get OK false "rate-limited:", REQs CLOSED
 * "rate-limited:"; a client that keeps going past rate_limit_strikes is
 * disconnected; and after all of that a fresh client is served normally.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay, sleep } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

describe('per-address limits', () => {
  const relay = useRelay({
    workers: 1,
    config: {
      limit_loopback: 1, max_connections_per_ip: 5, events_per_second: 2, events_burst: 5,
      reqs_per_second: 2, reqs_burst: 5, rate_limit_strikes: 30,
    },
  });

  it('refuses connections past max_connections_per_ip and admits again after one closes', async () => {
    const open = [];
    for (let i = 0; i < 5; i++) open.push(await relay.connect());
    const extra = await relay.tryConnect(1000);
    if (extra) {
      /* lws completes the handshake, then the worker closes it at once. */
      await extra.waitClosed({ timeout: 2000 });
    }
    await open.pop().end();
    await sleep(100);
    const again = await relay.connect();
    assert.equal(again.isOpen, true);
    await relay.closeClients();
  });

  it('answers EVENTs past the burst with OK false rate-limited:', async () => {
    const kp = keypair();
    const c = await relay.connect();
    /* Signed first and sent at once: one at a time, a busy machine spaced
     * them out enough for the bucket to refill (2 of 10 limited). */
    const flood = [];
    for (let i = 0; i < 10; i++) flood.push(signed(kp.sk, { content: `flood ${i}` }));
    for (const ev of flood) c.send(['EVENT', ev]);
    const results = [];
    for (const ev of flood) results.push(await c.okFor(ev.id));
    assert.equal(results.filter((r) => r.ok).length >= 5, true);
    const limited = results.filter((r) => !r.ok);
    assert.ok(limited.length >= 3, `only ${limited.length} of 10 were limited`);
    for (const r of limited) assert.match(r.message, /^rate-limited: /);
    await sleep(1600); /* two per second refill */
    assert.equal((await c.publish(signed(kp.sk, { content: 'after a pause' }))).ok, true);
    await relay.closeClients();
  });

  it('answers REQs past the burst with CLOSED rate-limited:', async () => {
    const c = await relay.connect();
    const closed = [];
    for (let i = 0; i < 10; i++) c.send(['REQ', `q${i}`, { limit: 1 }]); /* at once, as above */
    for (let i = 0; i < 10; i++) {
      const r = await c.collect(`q${i}`);
      if (!r.eose) closed.push(r.closed);
    }
    assert.ok(closed.length >= 3, `only ${closed.length} of 10 were refused`);
    for (const why of closed) assert.match(why, /^rate-limited: /);
    await relay.closeClients();
  });

  it('disconnects a client that keeps hammering, then serves a fresh one', async () => {
    const kp = keypair();
    const c = await relay.connect();
    for (let i = 0; i < 80 && c.isOpen; i++) c.send(['EVENT', signed(kp.sk, { content: `hammer ${i}` })]);
    await c.waitClosed({ timeout: 5000 });
    await sleep(2500);
    const fresh = await relay.connect();
    const ok = await fresh.publish(signed(keypair().sk, { content: 'fresh client' }));
    assert.equal(ok.ok, true, ok.message);
  });
});
