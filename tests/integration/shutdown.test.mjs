/*
 * shutdown.test.mjs - SIGTERM stops a worker cleanly while clients are
 * still connected with open subscriptions (exit code 0, clients closed),
 * and the other worker keeps serving.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

describe('shutdown with clients connected', () => {
  const relay = useRelay({ workers: 2 });

  it('a worker exits 0 on SIGTERM with live subscriptions open', async () => {
    const clients = [];
    for (let i = 0; i < 3; i++) {
      const c = await relay.connectTo(1);
      assert.equal((await c.req(`s${i}`, { kinds: [1] })).eose, true);
      clients.push(c);
    }
    const exit = await relay.kill(1, 'SIGTERM', { wait: true });
    assert.deepEqual(exit, { code: 0, signal: null });
    for (const c of clients) await c.waitClosed({ timeout: 3000 });
    const other = await relay.connectTo(2);
    assert.equal((await other.publish(signed(keypair().sk, { content: 'still here' }))).ok, true);
    await relay.restartWorker(1);
  });
});
