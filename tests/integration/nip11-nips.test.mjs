/*
 * nip11-nips.test.mjs - supported_nips in the NIP-11 document lists what is
 * enabled now: 1, 9, 11, 40, 45, 50 and 62 by default, and without 50 when
 * the search index is off (search = 0).  Two relays side by side, the
 * second with search = 0, and both workers of each asked several times.
 */
import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { itStopsCleanly, Relay, HOST } from './lib/relay.mjs';

const NIP11 = { Accept: 'application/nostr+json' };
const IMPLEMENTED = [1, 9, 11, 40, 45, 50, 62];

/* GET / on a connection of its own (no keep-alive), so the kernel may hand
 * each request to either worker. */
function freshGet(relay) {
  return new Promise((resolve, reject) => {
    const req = httpGet({ host: HOST, port: relay.port, path: '/', headers: NIP11, agent: false, timeout: 5000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => { body += d; });
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      });
    req.on('timeout', () => req.destroy(new Error('GET / timed out')));
    req.on('error', reject);
  });
}

async function supportedNips(relay) {
  const res = await freshGet(relay);
  assert.equal(res.status, 200, res.body);
  const doc = JSON.parse(res.body);
  return { nips: doc.supported_nips, worker: Number(res.headers['x-relay-worker']) };
}

/* The list 16 requests on fresh connections got, checked to be the same
 * every time (whichever worker answered). */
async function consistentNips(relay) {
  const first = (await supportedNips(relay)).nips;
  for (let i = 0; i < 15; i++) {
    const { nips, worker } = await supportedNips(relay);
    assert.deepEqual(nips, first, `worker ${worker} disagrees`);
  }
  return first;
}

describe('NIP-11 supported_nips', () => {
  const on = new Relay();
  const off = new Relay({ config: { search: 0 } });
  before(async () => {
    await on.start();
    await off.start();
  });
  after(async () => {
    if (on.stored && !on.stopped) await on.stop();
    if (off.stored && !off.stopped) await off.stop();
  });
  afterEach(async () => {
    await on.closeClients();
    await off.closeClients();
  });

  it('is a list of distinct integers in ascending order', async () => {
    for (const relay of [on, off]) {
      const nips = await consistentNips(relay);
      assert.ok(Array.isArray(nips), JSON.stringify(nips));
      assert.ok(nips.every(Number.isInteger), JSON.stringify(nips));
      assert.deepEqual(nips, [...new Set(nips)].sort((a, b) => a - b), 'ascending, no duplicates');
    }
  });

  it('lists 1, 9, 11, 40, 45, 50 and 62 by default', async () => {
    const nips = await consistentNips(on);
    for (const n of IMPLEMENTED) assert.ok(nips.includes(n), `NIP-${n} missing from ${JSON.stringify(nips)}`);
  });

  it('with search = 0 lists the same without 50', async () => {
    const withSearch = await consistentNips(on);
    const without = await consistentNips(off);
    assert.ok(!without.includes(50), JSON.stringify(without));
    assert.deepEqual(without, withSearch.filter((n) => n !== 50));
  });

  /* README: "Each HTTP/websocket response carries X-Relay-Worker: N";
   * needed here to know that both workers were asked. */
  it('the document comes from both workers of both relays (X-Relay-Worker)', async () => {
    for (const relay of [on, off]) {
      const workers = new Set();
      for (let i = 0; i < 64 && workers.size < 2; i++) {
        const res = await freshGet(relay);
        assert.ok(res.headers['x-relay-worker'] !== undefined,
          `no X-Relay-Worker header on the NIP-11 response: ${JSON.stringify(res.headers)}`);
        workers.add(Number(res.headers['x-relay-worker']));
      }
      assert.deepEqual([...workers].sort(), [1, 2]);
    }
  });

  itStopsCleanly(on);
  itStopsCleanly(off);
});
