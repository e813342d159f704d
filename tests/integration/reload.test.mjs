/*
 * reload.test.mjs - SIGHUP applies a changed config to running workers
 * without dropping connections: the NIP-11 document and limits change, a
 * key that needs a restart keeps its running value, and a broken file is
 * refused with the running configuration kept.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { useRelay, until } from './lib/relay.mjs';

async function nip11(relay) {
  return JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
}

describe('config reload', () => {
  const relay = useRelay({ workers: 2, config: { relay_name: 'before', max_filters: 5 } });

  it('SIGHUP changes texts and limits on every worker and keeps clients connected', async () => {
    const c1 = await relay.connectTo(1);
    const c2 = await relay.connectTo(2);
    const text = readFileSync(relay.configPath, 'utf8')
      .replace(/^relay_name = .*$/m, 'relay_name = after')
      .replace(/^max_filters = .*$/m, 'max_filters = 2');
    writeFileSync(relay.configPath, text);
    for (const n of [1, 2]) await relay.kill(n, 'SIGHUP');
    await until(async () => (await nip11(relay)).name === 'after', { timeout: 3000, what: 'the new name' });
    for (let i = 0; i < 4; i++) assert.equal((await nip11(relay)).limitation.max_filters, 2);
    for (const c of [c1, c2]) {
      assert.equal(c.isOpen, true, 'a reload dropped a connection');
      const r = await c.req('three', {}, {}, {});
      assert.equal(r.eose, false);
      assert.match(r.closed, /^invalid: /);
      assert.equal((await c.req('two', {}, {})).eose, true);
    }
  });

  it('relayctl reload signals stored and every worker', async () => {
    const text = readFileSync(relay.configPath, 'utf8').replace(/^relay_name = .*$/m, 'relay_name = via relayctl');
    writeFileSync(relay.configPath, text);
    const r = await relay.relayctl('--json', 'reload');
    assert.equal(r.code, 0, r.stderr);
    const reply = JSON.parse(r.stdout);
    assert.equal(reply.stored, true);
    assert.deepEqual(reply.workers.sort(), [1, 2]);
    await until(async () => {
      for (let i = 0; i < 4; i++) if ((await nip11(relay)).name !== 'via relayctl') return false;
      return true;
    }, { timeout: 3000, what: 'the name changed on both workers' });
  });

  it("stored's max_limit and search keep their running values, in NIP-11 too, until restarts", async () => {
    const before = await nip11(relay);
    assert.equal(before.limitation.max_limit, 500);
    assert.ok(before.supported_nips.includes(50));
    assert.doesNotMatch(readFileSync(relay.configPath, 'utf8'), /^(max_limit|search) =/m);
    writeFileSync(relay.configPath,
      readFileSync(relay.configPath, 'utf8') + 'max_limit = 1000\nsearch = 0\ndeliver_queue = 100\n');
    const r = await relay.relayctl('--json', 'reload');
    assert.equal(r.code, 0, r.stderr);
    await until(() => /reload: search changed; restart stored, then the workers/.test(relay.logs()),
      { timeout: 3000, what: 'the restart hint in the log' });
    /* Each process names every key it cannot apply live. */
    await until(() => /reload: deliver_queue changed; restart the worker to apply it/.test(relay.logs()),
      { timeout: 3000, what: "a worker's hint for deliver_queue" });
    for (const key of ['max_limit', 'search', 'deliver_queue'])
      await until(() => new RegExp(`reload: ${key} changed; stored applies it at its next start`).test(relay.logs()),
        { timeout: 3000, what: `stored's hint for ${key}` });
    for (let i = 0; i < 4; i++) {
      const doc = await nip11(relay);
      assert.equal(doc.limitation.max_limit, 500);
      assert.equal(doc.limitation.default_limit, 500);
      assert.ok(doc.supported_nips.includes(50));
    }
  });

  it('a broken file is refused and the running configuration stays', async () => {
    writeFileSync(relay.configPath, readFileSync(relay.configPath, 'utf8') + '\nno_such_key = 1\n');
    await relay.kill(1, 'SIGHUP');
    await until(() => /reload refused/.test(relay.logs()), { timeout: 3000, what: 'a refusal in the log' });
    const c = await relay.connectTo(1);
    assert.equal((await c.req('ok', {}, {})).eose, true);
    assert.equal((await nip11(relay)).name, 'via relayctl');
  });
});
