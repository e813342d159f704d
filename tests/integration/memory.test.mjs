/*
 * memory.test.mjs - heap_trim_interval (common/heaptrim.h): every process
 * hands its freed heap back to the system on that schedule.
 *   - with heap_trim_interval = 1, after a burst of 400 connections opened
 *     and closed, stored and each worker log a trim (log_level = debug) and
 *     keep serving;
 *   - with heap_trim_interval = 0 none of them trims.
 * What a trim does to the resident size is checked in test_heaptrim.c and
 * measured by bench/soak (bench/RESULTS.md, "Soak").
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay, until, sleep } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const TRIMMED = /: debug: heap trimmed in \d+ us/;

async function burst(relay, n) {
  const conns = [];
  for (let i = 0; i < n; i++) conns.push(relay.connect());
  for (const c of await Promise.all(conns)) await c.end();
}

describe('heap_trim_interval = 1', () => {
  const relay = useRelay({ workers: 2, config: { heap_trim_interval: 1, log_level: 'debug' } });

  it('stored and every worker trim their heaps, and keep serving', async () => {
    await burst(relay, 400);
    const procs = [relay.stored, relay.relayd[1], relay.relayd[2]];
    const mark = procs.map((p) => p.log.length);
    await until(() => procs.every((p, i) => TRIMMED.test(p.log.slice(mark[i]))),
      { timeout: 5000, what: 'a "heap trimmed" line from stored and from each worker' });
    const c = await relay.connect();
    const ev = await c.mustPublish(signed(keypair().sk, { content: 'after the trims' }));
    assert.deepEqual((await c.req('after', { ids: [ev.id] })).events.map((e) => e.id), [ev.id]);
  });
});

describe('heap_trim_interval = 0', () => {
  const relay = useRelay({ workers: 1, config: { heap_trim_interval: 0, log_level: 'debug' } });

  it('never trims', async () => {
    await burst(relay, 100);
    await sleep(2500);
    for (const p of [relay.stored, relay.relayd[1]])
      assert.equal(TRIMMED.test(p.log), false, `${p.name} trimmed its heap`);
  });
});
