/*
 * nip11.test.mjs - the relay information document (NIP-11): GET / with
 * Accept: application/nostr+json, its fields and CORS headers, limitation
 * values equal to the configured ones (and to the defaults when unset), and
 * the advertised limits being the enforced ones.  software is a URL; icon,
 * banner, privacy_policy, terms_of_service and self appear only when set.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { itStopsCleanly, useRelay } from './lib/relay.mjs';
import { keypair, PREFIXES } from './lib/client.mjs';

const NIP11 = { Accept: 'application/nostr+json' };
const OPERATOR = keypair().pk;
const ZERO = '0'.repeat(64);

/* config key -> [limitation field, configured value, default value] */
const LIMITS = [
  ['max_message_bytes', 'max_message_length', 100000, 131072],
  ['max_subscriptions', 'max_subscriptions', 7, 20],
  ['max_filters', 'max_filters', 6, 10],
  ['max_limit', 'max_limit', 123, 500],
  ['max_subid_length', 'max_subid_length', 40, 64],
  ['max_event_tags', 'max_event_tags', 150, 2000],
  ['max_content_length', 'max_content_length', 5000, 65536],
  ['created_at_max_future', 'created_at_upper_limit', 600, 900],
];

const INFO = {
  relay_name: 'Integration Test Relay',
  relay_description: 'Started by tests/integration; gone when they end.',
  relay_pubkey: OPERATOR,
  relay_contact: 'operator@relay.invalid',
};

async function getDocument(relay) {
  const res = await relay.httpGet('/', NIP11);
  assert.equal(res.status, 200, `GET / status ${res.status}: ${res.body}`);
  assert.match(res.headers['content-type'] ?? '', /json/, 'content-type');
  let doc;
  assert.doesNotThrow(() => { doc = JSON.parse(res.body); }, `body is JSON: ${res.body}`);
  return { res, doc };
}

describe('NIP-11 with configured values', () => {
  const relay = useRelay({
    config: { ...INFO, ...Object.fromEntries(LIMITS.map(([key, , value]) => [key, value])) },
  });

  it('serves the document on every request (both workers)', async () => {
    for (let i = 0; i < 8; i++) {
      const { doc } = await getDocument(relay);
      assert.equal(doc.name, INFO.relay_name);
    }
  });

  it('the Accept header is read case-insensitively, among other types', async () => {
    for (const accept of ['Application/Nostr+JSON', 'text/html;q=0.5, APPLICATION/NOSTR+JSON']) {
      const res = await relay.httpGet('/', { Accept: accept });
      assert.equal(res.status, 200);
      assert.match(res.headers['content-type'] ?? '', /json/, accept);
      assert.equal(JSON.parse(res.body).name, INFO.relay_name, accept);
    }
  });

  /* [document field, expected value] */
  const FIELDS = [
    ['name', INFO.relay_name],
    ['description', INFO.relay_description],
    ['pubkey', INFO.relay_pubkey],
    ['contact', INFO.relay_contact],
  ];
  for (const [field, value] of FIELDS) {
    it(`${field} is the configured one`, async () => {
      const { doc } = await getDocument(relay);
      assert.equal(doc[field], value);
    });
  }

  it('software and version are strings', async () => {
    const { doc } = await getDocument(relay);
    assert.equal(typeof doc.software, 'string');
    assert.ok(doc.software.length > 0);
    assert.equal(typeof doc.version, 'string');
    assert.ok(doc.version.length > 0);
  });

  it('supported_nips is a list of integers including 1 and 11', async () => {
    const { doc } = await getDocument(relay);
    assert.ok(Array.isArray(doc.supported_nips), JSON.stringify(doc.supported_nips));
    for (const n of doc.supported_nips) assert.ok(Number.isInteger(n), `${JSON.stringify(n)} is not an integer`);
    assert.ok(doc.supported_nips.includes(1));
    assert.ok(doc.supported_nips.includes(11));
  });

  for (const [key, field, value] of LIMITS) {
    it(`limitation.${field} is ${key} (${value})`, async () => {
      const { doc } = await getDocument(relay);
      assert.equal(typeof doc.limitation, 'object');
      assert.equal(doc.limitation[field], value);
    });
  }

  /* [header, pattern its value must match] */
  const CORS = [
    ['access-control-allow-origin', /\S/],
    ['access-control-allow-headers', /\S/],
    ['access-control-allow-methods', /GET/i],
  ];
  for (const [header, pattern] of CORS) {
    it(`CORS header ${header}`, async () => {
      const { res } = await getDocument(relay);
      assert.equal(typeof res.headers[header], 'string', `${header} is missing`);
      assert.match(res.headers[header], pattern);
    });
  }

  it('the advertised limits are the enforced ones', async () => {
    const c = await relay.connect();
    const refusal = new RegExp(`^(${PREFIXES.join('|')}):`);
    assert.equal((await c.req('s'.repeat(40), { ids: [ZERO] })).eose, true, '40-character sub id');
    assert.match((await c.req('s'.repeat(41), { ids: [ZERO] })).closed ?? '(EOSE)', refusal, '41-character sub id');
    const six = Array.from({ length: 6 }, () => ({ ids: [ZERO] }));
    assert.equal((await c.req('six', ...six)).eose, true, 'six filters');
    assert.match((await c.req('seven', ...six, { ids: [ZERO] })).closed ?? '(EOSE)', refusal, 'seven filters');
  });

  it('websockets still work on the same port', async () => {
    const c = await relay.connect();
    assert.equal((await c.req('ws', { ids: [ZERO] })).eose, true);
  });

  itStopsCleanly(relay);
});

/* The optional fields: [config key, document field, a value]. */
const OPTIONAL = [
  ['relay_icon', 'icon', 'https://relay.invalid/icon.png'],
  ['relay_banner', 'banner', 'https://relay.invalid/banner.jpg'],
  ['relay_privacy_policy', 'privacy_policy', 'https://relay.invalid/privacy.txt'],
  ['relay_terms_of_service', 'terms_of_service', 'https://relay.invalid/terms.txt'],
  ['relay_self', 'self', keypair().pk],
];

describe('NIP-11 with the optional fields set', () => {
  const relay = useRelay({
    workers: 1,
    config: { ...INFO, relay_software: 'https://relay.invalid/src',
      ...Object.fromEntries(OPTIONAL.map(([key, , value]) => [key, value])) },
  });

  it('software is the configured URL', async () => {
    const { doc } = await getDocument(relay);
    assert.equal(doc.software, 'https://relay.invalid/src');
  });

  for (const [key, field, value] of OPTIONAL) {
    it(`${field} is ${key}`, async () => {
      const { doc } = await getDocument(relay);
      assert.equal(doc[field], value);
    });
  }

  itStopsCleanly(relay);
});

describe('NIP-11 with default limits', () => {
  const relay = useRelay({ config: INFO });

  it('software is a URL, and the optional fields are left out', async () => {
    const { doc } = await getDocument(relay);
    assert.match(doc.software, /^https:\/\/\S+$/);
    for (const [, field] of OPTIONAL) assert.equal(doc[field], undefined, field);
  });

  for (const [key, field, , value] of LIMITS) {
    it(`limitation.${field} defaults to ${value} (${key})`, async () => {
      const { doc } = await getDocument(relay);
      assert.equal(doc.limitation[field], value);
    });
  }

  itStopsCleanly(relay);
});
