/*
 * verify-inline.test.mjs - verify_threads = 0 (parsing and signature checks
 * on the event loop, kept for the design comparison in bench/RESULTS.md)
 * serves the protocol like the default: events verified, bad signatures
 * refused, REQ answered, live delivery in publish order.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, signed, broken } from './lib/client.mjs';

describe('verify_threads = 0', () => {
  const relay = useRelay({ workers: 1, config: { verify_threads: 0 } });

  it('stores a valid event and refuses a bad signature with invalid:', async () => {
    const { sk, pk } = keypair();
    const c = await relay.connect();
    const ev = await c.mustPublish(signed(sk, { content: 'inline' }));
    const bad = await c.publish(broken.badSig(signed(sk, { content: 'forged' })));
    assert.equal(bad.ok, false);
    assert.match(bad.message, /^invalid: /);
    assert.deepEqual(await c.req('q', { authors: [pk] }), { events: [ev], eose: true, closed: null });
  });

  it('delivers live events and answers messages in order', async () => {
    const { sk, pk } = keypair();
    const sub = await relay.connect();
    assert.equal((await sub.req('live', { authors: [pk] })).eose, true);
    const pub = await relay.connect();
    const sent = [];
    for (let i = 0; i < 20; i++) sent.push(await pub.mustPublish(signed(sk, { content: `n${i}` })));
    for (const ev of sent) assert.deepEqual(await sub.liveEvent('live', ev.id), ev);
  });

  itStopsCleanly(relay);
});
