/*
 * workers.test.mjs - one relayd dying does not take the relay down: killing
 * a worker with SIGKILL leaves the other serving (its clients keep working
 * and see new events), a restarted worker (same -i) serves again without the
 * dead incarnation's subscriptions, and every event acknowledged with OK true
 * stays queryable, also across a restart of the whole relay.
 *
 * The tests run in order against one relay and add to `acked`, the ids of
 * every event acknowledged so far; the last test restarts everything.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Relay, useRelay, sleep } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const author = keypair();
const acked = new Set();

/* Asserts that every acknowledged event is returned through conn. */
async function assertAllStored(conn, what) {
  const r = await conn.req('all', { authors: [author.pk], limit: 500 });
  assert.equal(r.eose, true, `REQ refused: ${r.closed}`);
  const have = new Set(r.events.map((e) => e.id));
  const missing = [...acked].filter((id) => !have.has(id));
  assert.deepEqual(missing, [], `${what}: ${missing.length} of ${acked.size} acknowledged events missing`);
}

async function publishAcked(conn, content) {
  const ev = await conn.mustPublish(signed(author.sk, { content }));
  acked.add(ev.id);
  return ev;
}

describe('workers', () => {
  const relay = useRelay({ workers: 2 });

  it('SIGKILL of worker 1 leaves worker 2 serving its clients and new ones', async () => {
    const c1 = await relay.connectTo(1);
    const c2 = await relay.connectTo(2);
    for (let i = 0; i < 10; i++) {
      await publishAcked(c1, `before kill via 1 #${i}`);
      await publishAcked(c2, `before kill via 2 #${i}`);
    }
    assert.equal((await c2.req('watch', { authors: [author.pk], limit: 0 })).eose, true);

    const exit = await relay.kill(1, 'SIGKILL');
    assert.equal(exit.signal, 'SIGKILL');
    await c1.waitClosed({ timeout: 3000 });

    const own = await publishAcked(c2, 'after kill via 2');
    await c2.liveEvent('watch', own.id);
    for (let i = 0; i < 5; i++) {
      const c = await relay.connect();
      assert.equal(c.worker, 2, 'only worker 2 accepts while worker 1 is dead');
      const ev = await publishAcked(c, `after kill, new connection #${i}`);
      await c2.liveEvent('watch', ev.id);
    }
    await assertAllStored(c2, 'through worker 2 after the kill');
  });

  it('restarted worker 1 serves again, sees everything, and live delivery works both ways', async () => {
    await relay.restartWorker(1);
    const c1 = await relay.connectTo(1);
    const c2 = await relay.connectTo(2);
    await assertAllStored(c1, 'through the restarted worker 1');
    assert.equal((await c1.req('w1', { authors: [author.pk], limit: 0 })).eose, true);
    assert.equal((await c2.req('w2', { authors: [author.pk], limit: 0 })).eose, true);
    const a = await publishAcked(c2, 'from 2 to restarted 1');
    await c1.liveEvent('w1', a.id);
    const b = await publishAcked(c1, 'from restarted 1 to 2');
    await c2.liveEvent('w2', b.id);
  });

  it('subscriptions of a killed worker do not reach connections of its successor', async () => {
    const other = keypair();
    const doomed = [];
    for (let i = 0; i < 3; i++) {
      const c = await relay.connectTo(1);
      assert.equal((await c.req(`old-${i}`, { authors: [other.pk] })).eose, true);
      doomed.push(c);
    }
    await relay.kill(1, 'SIGKILL');
    await relay.restartWorker(1);
    /* new connections on worker 1, likely reusing the dead ones' slots */
    const fresh = [];
    for (let i = 0; i < 3; i++) {
      const c = await relay.connectTo(1);
      assert.equal((await c.req('new', { authors: [other.pk] })).eose, true);
      fresh.push(c);
    }
    const pub = await relay.connectTo(2);
    const ev = await pub.mustPublish(signed(other.sk, { content: 'who gets this?' }));
    for (const c of fresh) await c.liveEvent('new', ev.id);
    await sleep(200);
    for (const c of fresh) assert.deepEqual(c.take(), [], 'a dead incarnation\'s subscription delivered here');
  });

  it('events acknowledged while worker 2 is killed mid-stream are all stored', async () => {
    const c = await relay.connectTo(2);
    const evs = Array.from({ length: 100 }, (_, i) => signed(author.sk, { content: `in flight #${i}` }));
    for (const ev of evs) c.send(['EVENT', ev]);
    for (let i = 0; i < 10; i++) assert.equal((await c.okFor(evs[i].id)).ok, true);
    await relay.kill(2, 'SIGKILL');
    await c.waitClosed({ timeout: 3000 });
    for (const m of c.take((f) => f[0] === 'OK')) {
      if (m[2] === true) acked.add(m[1]);
    }
    for (let i = 0; i < 10; i++) acked.add(evs[i].id);
    const survivor = await relay.connect();
    assert.equal(survivor.worker, 1);
    await assertAllStored(survivor, 'through worker 1 after worker 2 died mid-stream');
    await relay.restartWorker(2);
    await assertAllStored(await relay.connectTo(2), 'through the restarted worker 2');
  });

  it('a restart of the whole relay on the same data_dir keeps every acknowledged event', async () => {
    await relay.stop({ keepDir: true });
    const again = new Relay({ workers: 2, dir: relay.dir });
    await again.start();
    try {
      for (const n of [1, 2]) await assertAllStored(await again.connectTo(n), `worker ${n} after a full restart`);
    } finally {
      await again.closeClients();
      await again.stop();
    }
  });
});
