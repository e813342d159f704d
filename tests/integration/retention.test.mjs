/*
 * retention.test.mjs - retention rules: `relayctl retention` previews what
 * each rule would remove, and stored's periodic job removes exactly that
 * (the first rule naming a kind decides), leaving everything else.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay, until } from './lib/relay.mjs';
import { keypair, signed, now } from './lib/client.mjs';

const DAY = 86400;

describe('retention rules', () => {
  const relay = useRelay({ workers: 1, config: { retention: '7:1; *:30', expire_interval: 1 } });

  it('previews, then removes old events by kind and keeps the rest', async () => {
    const kp = keypair();
    const c = await relay.connect();
    const old7 = signed(kp.sk, { kind: 7, created_at: now() - 2 * DAY, content: '+' });
    const new7 = signed(kp.sk, { kind: 7, created_at: now(), content: '+' });
    const old1 = signed(kp.sk, { kind: 1, created_at: now() - 2 * DAY, content: 'kept: 30 days' });
    const ancient1 = signed(kp.sk, { kind: 1, created_at: now() - 40 * DAY, content: 'too old' });
    /* Publishing and the job race; the preview is checked on what remains. */
    for (const ev of [old7, new7, old1, ancient1]) assert.equal((await c.publish(ev)).ok, true);
    const preview = await relay.relayctl('--json', 'retention');
    assert.equal(preview.code, 0, preview.stderr);
    const rules = JSON.parse(preview.stdout).rules;
    assert.equal(rules.length, 2);
    assert.equal(rules[0].days, 1);
    assert.equal(rules[1].days, 30);
    await until(async () => (await c.req(`q${Math.random()}`, { authors: [kp.pk] })).events.length === 2,
      { timeout: 6000, interval: 300, what: 'the old events to be removed' });
    const left = (await c.req('left', { authors: [kp.pk] })).events.map((e) => e.id).sort();
    assert.deepEqual(left, [new7.id, old1.id].sort());
    const after = JSON.parse((await relay.relayctl('--json', 'retention')).stdout).rules;
    assert.deepEqual(after.map((r) => r.would_delete), [0, 0]);
  });
});
