/*
 * disk-full.test.mjs - the database's filesystem fills up: new events are
 * refused with OK false "error: ..." (never acknowledged and then lost),
 * every event acknowledged before stays served, and once space returns the
 * relay stores events again by itself.  Below disk_reserve_mb stored
 * refuses them itself, with "error: the relay's storage is full", before
 * SQLite meets a full disk, so REQs and relayctl delete still run.  The
 * data directory is a small tmpfs the test mounts, so it runs only as root.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, openSync, writeSync, closeSync, truncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { Relay, until } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const asRoot = process.getuid && process.getuid() === 0;
const FULL = "error: the relay's storage is full";
const MIB = 1024 * 1024;

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

/* Mounts a tmpfs of size at a new directory; returns its path. */
function mountTmpfs(size) {
  const mnt = mkdtempSync(join(tmpdir(), 'relay-disk-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mnt]);
  return mnt;
}

function unmount(mnt) {
  execFileSync('umount', [mnt]);
  rmSync(mnt, { recursive: true, force: true });
}

/* How many times re matches in text. */
function count(text, re) {
  return (text.match(new RegExp(re.source, 'g')) || []).length;
}

/* Why the tests cannot run here, or false: mounting needs root and the
 * right to mount (a container may deny it). */
function tmpfsSkip() {
  if (!asRoot) return 'needs root to mount a small tmpfs';
  try {
    unmount(mountTmpfs('1m'));
    return false;
  } catch (err) {
    return `cannot mount a tmpfs here: ${err.message.split('\n')[0]}`;
  }
}
const skip = tmpfsSkip();

/* A relay of one worker whose data_dir is on a new tmpfs of size, for the
 * enclosing describe; t.mnt and t.relay once its before() has run. */
function relayOnTmpfs(size) {
  const t = { mnt: null, relay: null };
  before(async () => {
    t.mnt = mountTmpfs(size);
    t.relay = new Relay({ workers: 1, config: { data_dir: join(t.mnt, 'data') } });
    await t.relay.start();
  });
  after(async () => {
    if (t.relay) await t.relay.stop();
    if (t.mnt) unmount(t.mnt);
  });
  return t;
}

describe('disk full', { skip }, () => {
  const t = relayOnTmpfs('8m');

  it('refuses with error: while full, loses nothing acknowledged, recovers when space returns', async () => {
    const { relay, mnt } = t;
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

/*
 * The default reserve (256 MiB) is capped at a quarter of the file system:
 * 16 MiB on this 64 MiB tmpfs.  The filler leaves 8 MiB free, below the
 * reserve but room enough for SQLite, so every refusal must be stored's own.
 */
describe('disk below the reserve', { skip }, () => {
  const t = relayOnTmpfs('64m');

  it('refuses with the storage-full message, serves REQs and delete, resumes by itself', async () => {
    const { relay, mnt } = t;
    const kp = keypair();
    const c = await relay.connect();
    const acked = [];
    for (let i = 0; i < 20; i++) acked.push((await c.mustPublish(signed(kp.sk, { content: `before ${i}` }))).id);
    const mark = relay.mark();
    const filler = join(mnt, 'filler');
    fill(filler);
    truncateSync(filler, statSync(filler).size - 8 * MIB);

    let first = null;
    await until(async () => {
      const r = await c.publish(signed(kp.sk, { content: `filling ${Math.random()}` }));
      if (r.ok) acked.push(r.id);
      else first = r.message;
      return !r.ok;
    }, { timeout: 10000, interval: 20, what: 'an event refused below the reserve' });
    assert.equal(first, FULL);
    for (let i = 0; i < 5; i++) {
      const r = await c.publish(signed(kp.sk, { content: `while full ${i}` }));
      assert.deepEqual([r.ok, r.message], [false, FULL]);
    }
    const ephemeral = await c.publish(signed(kp.sk, { kind: 20001, content: 'needs no disk' }));
    assert.equal(ephemeral.ok, true, ephemeral.message);

    const served = (await c.req('full', { authors: [kp.pk], limit: 500 })).events.map((e) => e.id);
    assert.deepEqual(new Set(served), new Set(acked), 'REQ while full');
    const stats = JSON.parse((await relay.relayctl('--json', 'stats')).stdout);
    assert.equal(stats.storage_full, 1);
    assert.ok(stats.storage_full_refusals >= 6, `refusals counted: ${stats.storage_full_refusals}`);
    const del = await relay.relayctl('delete', JSON.stringify({ ids: [acked[0]] }));
    assert.equal(del.code, 0, `relayctl delete while full: ${del.stderr}`);
    acked.shift();

    rmSync(filler);
    await until(async () => (await c.publish(signed(kp.sk, { content: `after ${Math.random()}` }))).ok,
      { timeout: 10000, interval: 50, what: 'an event stored after space returned' });
    acked.push((await c.mustPublish(signed(kp.sk, { content: 'stored again' }))).id);
    const logs = relay.logs(mark);
    assert.equal(count(logs, /storage is full:/), 1, logs);
    assert.equal(count(logs, /storage has room again:/), 1, logs);
    const have = new Set((await c.req('after', { authors: [kp.pk], limit: 500 })).events.map((e) => e.id));
    assert.deepEqual(acked.filter((id) => !have.has(id)), [], 'acknowledged events went missing');
  });
});
