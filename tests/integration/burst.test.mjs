/*
 * burst.test.mjs - a burst of EVENTs from many connections at once is
 * answered completely: every event gets its OK true, none an error.
 *
 * This is the reply path under load: one commit answers hundreds of events
 * in the same instant, and the raw REP socket stored used before dropped
 * the replies that did not fit its per-pipe queue of two (the clients then
 * got "error: storage did not answer in time" for events that were stored;
 * see proto/msg.h and stored/reply.h).  Also REQs sent into the burst all
 * get their EOSE with every event stored before them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, signed } from './lib/client.mjs';

const CONNS = 24;
const PER_CONN = 50;

describe('bursts', () => {
  const relay = useRelay({ workers: 2, config: { max_limit: 5000 } });

  it(`${CONNS} connections x ${PER_CONN} EVENTs in flight: every one acknowledged`, async () => {
    const { sk, pk } = keypair();
    const conns = await Promise.all(Array.from({ length: CONNS }, () => relay.connect()));
    const batches = conns.map((c, i) =>
      Array.from({ length: PER_CONN }, (_, j) => signed(sk, { content: `burst ${i}/${j}` })));
    for (const [i, c] of conns.entries())
      for (const ev of batches[i]) c.send(['EVENT', ev]);
    const oks = await Promise.all(conns.map((c, i) =>
      Promise.all(batches[i].map((ev) => c.okFor(ev.id, { timeout: 20000 })))));
    const failed = oks.flat().filter((r) => r.ok !== true);
    assert.deepEqual(failed.map((r) => r.message), []);

    conns[0].send(['REQ', 'all', { authors: [pk], limit: 5000 }]);
    const all = await conns[0].collect('all', { timeout: 20000 });
    assert.equal(all.eose, true);
    assert.equal(all.events.length, CONNS * PER_CONN);

    /* stored counts every reply it could not send; none here. */
    const r = await relay.relayctl('stats', '--json');
    assert.equal(r.code, 0, r.stderr);
    const stats = JSON.parse(r.stdout);
    assert.equal(stats.replies_dropped, 0);
    assert.ok(stats.events_accepted >= CONNS * PER_CONN);
  });

  it('REQs sent during a burst each get their history and EOSE', async () => {
    const { sk, pk } = keypair();
    const pubs = await Promise.all(Array.from({ length: 8 }, () => relay.connect()));
    const readers = await Promise.all(Array.from({ length: 8 }, () => relay.connect()));
    const stored = [];
    for (let i = 0; i < 20; i++) stored.push(await pubs[0].mustPublish(signed(sk, { content: `before ${i}`, created_at: 1700000000 + i })));
    for (const [i, p] of pubs.entries())
      for (let j = 0; j < 60; j++) p.send(['EVENT', signed(sk, { content: `flood ${i}/${j}` })]);
    for (const [i, r] of readers.entries()) r.send(['REQ', `h${i}`, { authors: [pk], until: 1700000019 }]);
    const answers = await Promise.all(readers.map((r, i) => r.collect(`h${i}`, { timeout: 20000 })));
    for (const a of answers) {
      assert.equal(a.eose, true);
      assert.deepEqual(a.events.map((e) => e.id), [...stored].reverse().map((e) => e.id));
    }
  });

  itStopsCleanly(relay);
});
