/*
 * shutdown.test.mjs - SIGTERM stops a worker cleanly while clients are
 * still connected with open subscriptions (exit code 0, clients closed),
 * and the other worker keeps serving.  SIGTERM to stored right after its
 * last OK leaves relay.db complete on its own: no WAL behind, and a copy of
 * relay.db alone, started as a new relay, serves every acknowledged event.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Relay, useRelay } from './lib/relay.mjs';
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

describe('a clean stop of stored', () => {
  it('leaves no WAL, and relay.db alone holds every acknowledged event', async () => {
    const relay = new Relay({ workers: 1 });
    const backup = mkdtempSync(join(tmpdir(), 'relay-it-backup-'));
    let restored = null;
    try {
      await relay.start();
      const author = keypair();
      const pub = await relay.connect();
      const acked = [];
      for (let i = 0; i < 40; i++)
        acked.push((await pub.mustPublish(signed(author.sk, { content: `kept #${i}` }))).id);
      /* At once: the checkpoint thread has not copied these yet. */
      const exit = await relay.kill('stored', 'SIGTERM', { wait: true });
      assert.deepEqual(exit, { code: 0, signal: null });
      assert.match(relay.stored.log, /relay\.db: final checkpoint copied/);
      for (const suffix of ['-wal', '-shm'])
        assert.equal(existsSync(join(relay.dataDir, `relay.db${suffix}`)), false, `relay.db${suffix} left behind`);
      mkdirSync(join(backup, 'data'));
      copyFileSync(join(relay.dataDir, 'relay.db'), join(backup, 'data', 'relay.db'));
      await relay.stop();

      restored = new Relay({ workers: 1, dir: backup });
      await restored.start();
      const c = await restored.connect();
      const all = await c.req('all', { authors: [author.pk], limit: 100 });
      const have = new Set(all.events.map((e) => e.id));
      assert.deepEqual(acked.filter((id) => !have.has(id)), []);
    } finally {
      if (restored) await restored.stop();
      if (!relay.stopped) await relay.stop();
      rmSync(backup, { recursive: true, force: true });
    }
  });
});
