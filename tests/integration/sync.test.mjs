/*
 * sync.test.mjs - relayctl sync between two of our relays over NIP-77.
 *
 * Both relays share most events; 1% of them only A holds and 1% only B.
 * `relayctl sync` run against A's config and B's URL must leave both with
 * exactly the same export, in each direction and both at once, and its
 * summary must count what it moved.  SYNC_EVENTS sets the size (default
 * 5,000, not the 50,000, so the file stays within minutes on a busy
 * 2-core machine; SYNC_EVENTS=50000 runs the full size).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, relayctlInput, useRelay } from './lib/relay.mjs';
import { keypair, signed, now } from './lib/client.mjs';

const N = Number(process.env.SYNC_EVENTS) || 5000;

async function load(relay, events) {
  for (let i = 0; i < events.length; i += 5000) {
    const chunk = events.slice(i, i + 5000).map((e) => JSON.stringify(e)).join('\n') + '\n';
    const r = await relayctlInput(relay, ['import'], chunk);
    assert.equal(r.code, 0, r.stderr);
  }
}

async function exported(relay, filter) {
  const r = await relayctlInput(relay, ['export', JSON.stringify(filter)], '', 120000);
  assert.equal(r.code, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l).map((l) => JSON.parse(l).id).sort();
}

function sync(relay, url, ...args) {
  return relayctlInput(relay, ['sync', url, ...args], '', 300000);
}

/* N events of pk's, split: 1% only on A, 1% only on B, the rest on both. */
function sets(sk) {
  const t = now() - N - 10;
  const all = Array.from({ length: N }, (_, i) =>
    signed(sk, { created_at: t + Math.floor(i / 3), content: `sync ${i}` }));
  const onlyA = all.filter((_, i) => i % 100 === 0), onlyB = all.filter((_, i) => i % 100 === 1);
  const both = all.filter((_, i) => i % 100 > 1);
  return { onlyA, onlyB, both };
}

describe('relayctl sync', () => {
  const a = useRelay({ workers: 1 });
  /* B holds about 3 N events once the three syncs ran: more than it serves. */
  const b = useRelay({ workers: 1, config: { neg_max_records: N } });

  for (const dir of ['down', 'up', 'both']) {
    it(`--dir ${dir}: ${N} events, 1% differing each way`, async () => {
      const { sk, pk } = keypair();
      const { onlyA, onlyB, both } = sets(sk);
      await load(a, [...onlyA, ...both]);
      await load(b, [...onlyB, ...both]);
      const filter = { authors: [pk] };
      const r = await sync(a, b.url, JSON.stringify(filter), '--dir', dir);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, new RegExp(`have ${onlyA.length} \\(only here\\), need ${onlyB.length} \\(only there\\)`));
      const ea = await exported(a, filter), eb = await exported(b, filter);
      const ids = (l) => l.map((e) => e.id).sort();
      const wantA = ids([...onlyA, ...both, ...(dir !== 'up' ? onlyB : [])]);
      const wantB = ids([...onlyB, ...both, ...(dir !== 'down' ? onlyA : [])]);
      assert.deepEqual(ea, wantA);
      assert.deepEqual(eb, wantB);
      if (dir === 'both') assert.deepEqual(ea, eb);
      if (dir !== 'up') assert.match(r.stdout, new RegExp(`stored ${onlyB.length},`));
      if (dir !== 'down') assert.match(r.stdout, new RegExp(`accepted ${onlyA.length},`));
      /* Once equal, a second sync moves nothing. */
      if (dir === 'both') {
        const again = await sync(a, b.url, JSON.stringify(filter), '--dir', 'both');
        assert.equal(again.code, 0, again.stderr);
        assert.match(again.stdout, /have 0 \(only here\), need 0 \(only there\), rounds 1/);
      }
    });
  }

  it('a peer refusing the sync gives exit status 1 and says why', async () => {
    const r = await sync(a, b.url, '{}');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refused the sync: blocked: /);
  });

  it('bad usage gives exit status 2', async () => {
    assert.equal((await sync(a, b.url, '{}', '--dir', 'sideways')).code, 2);
    assert.equal((await sync(a, b.url, '[1]')).code, 2);
  });

  itStopsCleanly(a);
  itStopsCleanly(b);
});
