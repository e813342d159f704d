/*
 * disk-full.test.mjs - the database's filesystem fills up: new events are
 * refused with OK false "error: ..." (never acknowledged and then lost),
 * every event acknowledged before stays served, and once space returns the
 * relay stores events again by itself.  The data directory is a small tmpfs
 * the test mounts, so it runs only as root.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, rmSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Relay, until } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const asRoot = process.getuid && process.getuid() === 0;

/* Writes zeros into path until the filesystem refuses (ENOSPC). */
function fill(path) {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (err) {
    if (err.code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
}

describe('disk full', { skip: !asRoot && 'needs root to mount a small tmpfs' }, () => {
  let mnt;
  let relay;

  before(async () => {
    mnt = mkdtempSync(join(tmpdir(), 'relay-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', mnt]);
    relay = new Relay({ workers: 1, config: { data_dir: join(mnt, 'data') } });
    await relay.start();
  });

  after(async () => {
    if (relay) await relay.stop();
    execFileSync('umount', [mnt]);
    rmSync(mnt, { recursive: true, force: true });
  });

  it('refuses with error: while full, loses nothing acknowledged, recovers when space returns', async () => {
    const kp = keypair();
    const c = await relay.connect();
    const acked = [];
    for (let i = 0; i < 30; i++) {
      const r = await c.publish(signed(kp.sk, { content: `before ${i}` }));
      assert.equal(r.ok, true, r.message);
      acked.push(r.id);
    }
    const filler = join(mnt, 'filler');
    fill(filler);
    const refusals = [];
    for (let i = 0; i < 200 && refusals.length < 5; i++) {
      const r = await c.publish(signed(kp.sk, { content: `while full ${i} ${'y'.repeat(2000)}` }));
      if (r.ok) acked.push(r.id);
      else refusals.push(r.message);
    }
    assert.ok(refusals.length > 0, 'nothing was refused on a full disk');
    for (const why of refusals) assert.match(why, /^error: /);
    rmSync(filler);
    await until(async () => (await c.publish(signed(kp.sk, { content: `after ${Math.random()}` }))).ok,
      { timeout: 10000, interval: 300, what: 'an event stored after space returned' });
    const have = new Set((await c.req('all', { authors: [kp.pk], limit: 500 })).events.map((e) => e.id));
    assert.deepEqual(acked.filter((id) => !have.has(id)), [], 'acknowledged events went missing');
  });
});
