/*
 * nip42-auth.test.mjs - authentication and who may publish what:
 *   NIP-42: a challenge on connect; AUTH with a kind 22242 event carrying
 *   the relay URL and that challenge is answered OK true; a wrong challenge,
 *   relay, kind, time or signature is OK false "invalid:"; several pubkeys
 *   per connection; kind 22242 is never stored or broadcast.
 *   NIP-70: an event with a ["-"] tag needs its author authenticated
 *   ("auth-required:" before, "restricted:" as someone else).
 *   auth_required = all / writes / reads: EVENT and REQ and COUNT / EVENT /
 *   REQ and COUNT refused with "auth-required:" until authenticated (and
 *   nothing with "no"), and NIP-11's auth_required true only for all.
 *   NIP-13: min_pow_difficulty refuses ids with too few leading zero bits
 *   with "pow:".
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay, until } from './lib/relay.mjs';
import { keypair, signed, now, broken } from './lib/client.mjs';

function authEvent(kp, relayUrl, challenge, { created_at = now(), kind = 22242 } = {}) {
  return signed(kp.sk, { kind, created_at, tags: [['relay', relayUrl], ['challenge', challenge]] });
}

async function challengeOf(c) {
  await until(() => c.challenge !== null, { timeout: 3000, what: 'an AUTH challenge' });
  return c.challenge;
}

async function authenticate(relay, c, kp) {
  const ev = authEvent(kp, relay.url, await challengeOf(c));
  c.send(['AUTH', ev]);
  return c.okFor(ev.id);
}

describe('NIP-42 AUTH and NIP-70 protected events', () => {
  const relay = useRelay({ workers: 2, config: { auth_challenge: 'connect' } });

  it('sends a challenge on connect, different per connection', async () => {
    const a = await relay.connect();
    const b = await relay.connect();
    const ca = await challengeOf(a);
    const cb = await challengeOf(b);
    assert.match(ca, /^[0-9a-f]{32}$/);
    assert.notEqual(ca, cb);
  });

  it('accepts a correct AUTH, and several pubkeys on one connection', async () => {
    const c = await relay.connect();
    for (const kp of [keypair(), keypair()]) {
      const ok = await authenticate(relay, c, kp);
      assert.equal(ok.ok, true, ok.message);
    }
  });

  /* README.md, Limits: 8 pubkeys per connection, fixed in relayd/auth.h. */
  it('refuses a ninth pubkey on one connection with restricted:', async () => {
    const c = await relay.connect();
    for (let i = 0; i < 8; i++) {
      const ok = await authenticate(relay, c, keypair());
      assert.equal(ok.ok, true, ok.message);
    }
    const ninth = await authenticate(relay, c, keypair());
    assert.equal(ninth.ok, false);
    assert.equal(ninth.message, 'restricted: this connection has authenticated too many pubkeys');
  });

  it('refuses AUTH with a wrong challenge, relay, kind, time or signature', async () => {
    const c = await relay.connect();
    const kp = keypair();
    const good = await challengeOf(c);
    const cases = [
      ['another challenge', authEvent(kp, relay.url, 'f'.repeat(32))],
      ['another relay', authEvent(kp, 'ws://127.0.0.1:1', good)],
      ['kind 1', authEvent(kp, relay.url, good, { kind: 1 })],
      ['an hour old', authEvent(kp, relay.url, good, { created_at: now() - 3600 })],
      ['a bad signature', broken.badSig(authEvent(kp, relay.url, good))],
    ];
    for (const [what, ev] of cases) {
      c.send(['AUTH', ev]);
      const ok = await c.okFor(ev.id);
      assert.equal(ok.ok, false, `${what} was accepted`);
      assert.match(ok.message, /^invalid: /, what);
    }
  });

  it('never stores or broadcasts kind 22242', async () => {
    const watcher = await relay.connect();
    assert.equal((await watcher.req('w', { kinds: [22242] })).eose, true);
    const c = await relay.connect();
    const kp = keypair();
    const ev = authEvent(kp, relay.url, await challengeOf(c));
    c.send(['AUTH', ev]);
    assert.equal((await c.okFor(ev.id)).ok, true);
    const sent = await c.publish(authEvent(kp, relay.url, await challengeOf(c)));
    assert.equal(sent.ok, false, 'a kind 22242 sent with EVENT was accepted');
    const later = await relay.connect();
    assert.deepEqual((await later.req('x', { kinds: [22242] })).events, []);
    assert.equal(watcher.take((f) => f[0] === 'EVENT').length, 0);
  });

  it('NIP-70: a protected event needs its author authenticated', async () => {
    const author = keypair();
    const other = keypair();
    const ev = signed(author.sk, { tags: [['-']], content: 'protected' });
    const c = await relay.connect();
    let ok = await c.publish(ev);
    assert.equal(ok.ok, false);
    assert.match(ok.message, /^auth-required: /);
    assert.equal((await authenticate(relay, c, other)).ok, true);
    ok = await c.publish(ev);
    assert.equal(ok.ok, false);
    assert.match(ok.message, /^restricted: /);
    assert.equal((await authenticate(relay, c, author)).ok, true);
    ok = await c.publish(ev);
    assert.equal(ok.ok, true, ok.message);
    const r = await (await relay.connect()).req('p', { ids: [ev.id] });
    assert.equal(r.events.length, 1);
  });
});

describe('auth_required = all', () => {
  const relay = useRelay({ workers: 1, config: { auth_required: 'all', auth_challenge: 'connect' } });

  it('refuses EVENT, REQ and COUNT until the client authenticates', async () => {
    const kp = keypair();
    const c = await relay.connect();
    const ev = signed(kp.sk, { content: 'needs auth' });
    const ok = await c.publish(ev);
    assert.equal(ok.ok, false);
    assert.match(ok.message, /^auth-required: /);
    const r = await c.req('r', {});
    assert.equal(r.eose, false);
    assert.match(r.closed, /^auth-required: /);
    c.send(['COUNT', 'n', {}]);
    const closed = await c.waitFor((f) => f[0] === 'CLOSED' && f[1] === 'n');
    assert.match(closed[2], /^auth-required: /);
    assert.equal((await authenticate(relay, c, kp)).ok, true);
    assert.equal((await c.publish(ev)).ok, true);
    assert.equal((await c.req('r2', { ids: [ev.id] })).events.length, 1);
  });

  it('says so in NIP-11', async () => {
    const doc = JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
    assert.equal(doc.limitation.auth_required, true);
    assert.equal(doc.limitation.restricted_writes, true);
    assert.ok(doc.supported_nips.includes(42));
    assert.ok(doc.supported_nips.includes(70));
  });
});

describe('NIP-13 minimum proof of work', () => {
  const relay = useRelay({ workers: 1, config: { min_pow_difficulty: 8, auth_challenge: 'connect' } });

  function leadingZeroBits(hex) {
    let bits = 0;
    for (const ch of hex) {
      const v = parseInt(ch, 16);
      if (v === 0) { bits += 4; continue; }
      return bits + Math.clz32(v) - 28;
    }
    return bits;
  }

  it('refuses ids with too little work and accepts enough', async () => {
    const kp = keypair();
    const c = await relay.connect();
    let weak;
    do weak = signed(kp.sk, { content: `weak ${Math.random()}` }); while (leadingZeroBits(weak.id) >= 8);
    const ok = await c.publish(weak);
    assert.equal(ok.ok, false);
    assert.match(ok.message, /^pow: /);
    let strong, nonce = 0;
    do strong = signed(kp.sk, { tags: [['nonce', String(nonce++), '8']], content: 'mined' });
    while (leadingZeroBits(strong.id) < 8);
    assert.equal((await c.publish(strong)).ok, true);
    const doc = JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
    assert.equal(doc.limitation.min_pow_difficulty, 8);
    assert.ok(doc.supported_nips.includes(13));
    /* Some writes are refused for what they are: restricted, though
     * nobody has to authenticate. */
    assert.equal(doc.limitation.restricted_writes, true);
    assert.equal(doc.limitation.auth_required, false);
  });
});

/* NIP-11 auth_required means no action at all before AUTH: only "all". */
for (const [mode, restricted] of [['writes', true], ['reads', false], ['no', false]]) {
  describe(`auth_required = ${mode}`, () => {
    const relay = useRelay({ workers: 1, config: { auth_required: mode, auth_challenge: 'connect', private_kinds: '' } });
    const writes = mode === 'writes';
    const reads = mode === 'reads';

    it(`refuses ${writes ? 'EVENT' : reads ? 'REQ and COUNT' : 'nothing'} until the client authenticates`,
      async () => {
        const kp = keypair();
        const c = await relay.connect();
        const ev = signed(kp.sk, { content: `auth_required = ${mode}` });
        const ok = await c.publish(ev);
        assert.equal(ok.ok, !writes, ok.message);
        if (writes) assert.match(ok.message, /^auth-required: /);
        const r = await c.req('r', { authors: [kp.pk] });
        assert.equal(r.eose, !reads, r.closed);
        if (reads) assert.match(r.closed, /^auth-required: /);
        c.send(['COUNT', 'n', { authors: [kp.pk] }]);
        const n = await c.waitFor((f) => f[1] === 'n');
        assert.equal(n[0], reads ? 'CLOSED' : 'COUNT');
        if (reads) assert.match(n[2], /^auth-required: /);
        /* Authenticated, everything goes. */
        assert.equal((await authenticate(relay, c, kp)).ok, true);
        if (writes) assert.equal((await c.publish(ev)).ok, true);
        const after = await c.req('r2', { authors: [kp.pk] });
        assert.deepEqual(after.events.map((e) => e.id), [ev.id]);
      });

    it(`says auth_required false and restricted_writes ${restricted}`, async () => {
      const doc = JSON.parse((await relay.httpGet('/', { Accept: 'application/nostr+json' })).body);
      assert.equal(doc.limitation.auth_required, false);
      assert.equal(doc.limitation.restricted_writes, restricted);
    });
  });
}

/* NIP-70: a repost (kind 6 or 16) that embeds a protected event. */
describe('NIP-70 reposts of protected events', () => {
  const relay = useRelay({ workers: 1, config: { auth_challenge: 'connect' } });
  const author = keypair();
  const reposter = keypair();
  const inner = signed(author.sk, { tags: [['-']], content: 'for members only' });
  const open = signed(author.sk, { content: 'for everyone' });
  const repost = (kind, content) =>
    signed(reposter.sk, { kind, content, tags: [['e', inner.id], ['p', author.pk]] });

  for (const kind of [6, 16]) {
    it(`kind ${kind} embedding one is blocked: unless the connection is its author`, async () => {
      const c = await relay.connect();
      let ok = await c.publish(repost(kind, JSON.stringify(inner)));
      assert.equal(ok.ok, false);
      assert.match(ok.message, /^blocked: /);
      assert.equal((await authenticate(relay, c, reposter)).ok, true);
      ok = await c.publish(repost(kind, ` ${JSON.stringify(inner)}`));
      assert.equal(ok.ok, false, 'the reposter is not the embedded event\'s author');
      assert.match(ok.message, /^blocked: /);
      assert.equal((await authenticate(relay, c, author)).ok, true);
      ok = await c.publish(repost(kind, JSON.stringify(inner)));
      assert.equal(ok.ok, true, ok.message);
    });

    it(`kind ${kind} with empty content or an open event is accepted`, async () => {
      const c = await relay.connect();
      for (const content of ['', JSON.stringify(open), 'not JSON', '{"tags":"-"}']) {
        const ok = await c.publish(repost(kind, content));
        assert.equal(ok.ok, true, `${content}: ${ok.message}`);
      }
    });
  }
});

/* NIP-42 without relay_url: the relay tag may name the host the client
 * dialled (its Host header), normalized; loopback names are one host. */
describe('NIP-42 relay tag without relay_url', () => {
  const relay = useRelay({ workers: 1, config: { auth_challenge: 'connect' } });

  async function authAs(c, relayTag) {
    const ev = authEvent(keypair(), relayTag, await challengeOf(c));
    c.send(['AUTH', ev]);
    return c.okFor(ev.id);
  }

  it('names this machine by any of its loopback names, with or without a slash', async () => {
    const port = relay.port;
    for (const tag of [`ws://localhost:${port}`, `ws://127.0.0.1:${port}/`, `WS://LocalHost:${port}/`,
      `ws://[::1]:${port}`, `wss://localhost:${port}`]) {
      const ok = await authAs(await relay.connect(), tag);
      assert.equal(ok.ok, true, `${tag}: ${ok.message}`);
    }
  });

  it('refuses another port, another machine, or the wildcard address', async () => {
    const port = relay.port;
    for (const tag of [`ws://localhost:${port + 1}`, 'wss://relay.example.com', `ws://0.0.0.0:${port}`,
      `ws://10.0.0.1:${port}`, `http://localhost:${port}`]) {
      const ok = await authAs(await relay.connect(), tag);
      assert.equal(ok.ok, false, tag);
      assert.match(ok.message, /^invalid: the relay tag/, tag);
    }
  });

  it('names the host a proxy passed on, with the default port of the tag\'s scheme', async () => {
    const headers = { Host: 'Relay.Example.COM' };
    /* The URL of the bind names the relay whatever the Host. */
    for (const tag of ['wss://relay.example.com', 'ws://relay.example.com/', 'wss://relay.example.com:443/',
      `ws://localhost:${relay.port}`]) {
      const ok = await authAs(await relay.connect({ headers }), tag);
      assert.equal(ok.ok, true, `${tag}: ${ok.message}`);
    }
    for (const tag of ['wss://other.example.com', 'wss://relay.example.com:8443', 'ws://relay.example.com:443']) {
      const ok = await authAs(await relay.connect({ headers }), tag);
      assert.equal(ok.ok, false, tag);
    }
  });
});

describe('NIP-42 relay tag with relay_url set', () => {
  const relay = useRelay({
    workers: 1,
    config: { auth_challenge: 'connect', relay_url: 'wss://Relay.Example.com/nostr/' },
  });

  it('names relay_url normalized, and nothing else', async () => {
    for (const [tag, good] of [['wss://relay.example.com:443/nostr', true], ['WSS://relay.example.com/Nostr/', true],
      ['wss://relay.example.com', false], [relay.url, false], [`ws://localhost:${relay.port}`, false]]) {
      const c = await relay.connect({ headers: { Host: 'relay.example.com' } });
      const ev = authEvent(keypair(), tag, await challengeOf(c));
      c.send(['AUTH', ev]);
      const ok = await c.okFor(ev.id);
      assert.equal(ok.ok, good, `${tag}: ${ok.message}`);
    }
  });
});

/* auth_challenge = when_needed (the default): no challenge until an answer
 * asks for AUTH; then one, just before that answer, and only once. */
describe('NIP-42 challenge when needed (the default)', () => {
  const relay = useRelay({ workers: 1 });

  it('sends none to a client that needs none', async () => {
    const kp = keypair();
    const c = await relay.connect();
    await c.mustPublish(signed(kp.sk, { content: 'no AUTH needed' }));
    assert.equal((await c.req('r', { authors: [kp.pk] })).events.length, 1);
    assert.deepEqual(c.challenges, []);
  });

  it('sends one before the first auth-required: answer, and that one works', async () => {
    const author = keypair();
    const c = await relay.connect();
    const r = await c.req('dm', { kinds: [4], '#p': [author.pk] });
    assert.match(r.closed, /^auth-required: /);
    assert.equal(c.challenges.length, 1, 'the challenge came before the CLOSED');
    const ev = signed(author.sk, { tags: [['-']], content: 'protected' });
    const ok = await c.publish(ev);
    assert.match(ok.message, /^auth-required: /);
    assert.equal(c.challenges.length, 1, 'a connection gets its challenge once');
    assert.equal((await authenticate(relay, c, author)).ok, true);
    assert.equal((await c.publish(ev)).ok, true);
  });
});
