/*
 * stream.test.mjs - relayctl stream mirrors an upstream relay into ours and
 * survives the upstream's restart without losing events.
 *
 * The stream runs as a child process against the local relay's config.
 * Events published upstream before, during (just after it came back, while
 * the stream still waits out its backoff) and after a restart of every
 * upstream process must all end up in the local export; SIGTERM then ends
 * the stream with status 0 and a summary.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { binary, itStopsCleanly, relayctlInput, Relay, useRelay, until } from './lib/relay.mjs';
import { Client, keypair, signed, now } from './lib/client.mjs';

async function exportedIds(relay, filter) {
  const r = await relayctlInput(relay, ['export', JSON.stringify(filter)]);
  assert.equal(r.code, 0, r.stderr);
  return new Set(r.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l).id));
}

async function publishAll(relay, events) {
  const c = await Client.open(relay.url);
  for (const e of events) await c.mustPublish(e);
  await c.end();
}

describe('relayctl stream', () => {
  const local = useRelay({ workers: 1 });

  it('mirrors live events, and those the upstream took across its restart', async () => {
    const up = new Relay({ workers: 1 });
    await up.start();
    const { sk, pk } = keypair();
    const filter = { authors: [pk] };
    const child = spawn(binary('relayctl'), ['-c', local.configPath, 'stream', up.url, JSON.stringify(filter)],
      { cwd: local.dir });
    let out = '', err = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { err += d; });
    const exited = new Promise((res) => child.once('close', (code, signal) => res({ code, signal })));
    let up2 = null;
    try {
      const t = now();
      const before = Array.from({ length: 10 }, (_, i) => signed(sk, { created_at: t - 30 + i, content: `before ${i}` }));
      await publishAll(up, before);
      await until(async () => (await exportedIds(local, filter)).size === 10, { timeout: 15000, what: 'the first 10 events mirrored' });

      /* Every upstream process stops; a new one takes the same port and data. */
      await up.stop({ keepDir: true });
      up2 = new Relay({ workers: 1, dir: up.dir });
      up2.port = up.port;
      await up2.start();
      const during = Array.from({ length: 10 }, (_, i) => signed(sk, { created_at: t - 20 + i, content: `during ${i}` }));
      await publishAll(up2, during);
      await until(() => /gone; again in/.test(err), { timeout: 15000, what: 'the stream to notice' });
      const after = Array.from({ length: 10 }, (_, i) => signed(sk, { created_at: t - 10 + i, content: `after ${i}` }));
      await until(async () => (await exportedIds(local, filter)).size >= 20, { timeout: 30000, what: 'the events of the restart' });
      await publishAll(up2, after);
      const want = [...before, ...during, ...after].map((e) => e.id);
      await until(async () => {
        const have = await exportedIds(local, filter);
        return want.every((id) => have.has(id));
      }, { timeout: 30000, what: 'all 30 events mirrored' });
      assert.equal((await exportedIds(local, filter)).size, 30);
    } finally {
      child.kill('SIGTERM');
      const ex = await exited;
      if (up2 && !up2.stopped) await up2.stop();
      else if (!up.stopped) await up.stop();
      assert.equal(ex.code, 0, `stream exit ${JSON.stringify(ex)}: ${err}`);
    }
    assert.match(out, /^stream: received \d+, stored 30, duplicate \d+, refused 0, connections [2-9]/m);
  });

  itStopsCleanly(local);
});
