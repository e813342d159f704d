/*
 * client.mjs - a small promise-based Nostr client for the integration tests,
 * and the event builders the tests use (valid ones signed with nostr-tools,
 * deliberately broken ones, and NIP-01 canonical serialization done by hand).
 *
 * A Client keeps every frame it receives in an inbox, in arrival order.
 * waitFor(pred) removes and returns the first frame matching pred and leaves
 * the others where they are, so a test can later ask "did a CLOSED arrive?"
 * about frames it did not wait for.  Every wait is bounded; a timeout names
 * what was awaited and lists the unmatched frames, and a connection that
 * closes while a wait is pending fails that wait at once.
 *
 * Frames that are not valid JSON are kept as {invalidJson: text, error}; a
 * wait that does not ask for such a frame fails as soon as one arrives, with
 * the offending text, since a relay must never write broken JSON.
 */
import './webcrypto.mjs'; /* before nostr-tools draws a key: Node 18 */
import { createHash } from 'node:crypto';
import WebSocket from 'ws';
import { finalizeEvent, generateSecretKey, getPublicKey } from 'nostr-tools/pure';
import { schnorr } from '@noble/curves/secp256k1.js';

/* How long a wait lasts, in ms, unless the caller passes a timeout. */
export const DEFAULT_TIMEOUT_MS = 5000;

/* Every wait's bound is multiplied by RELAY_WAIT_SCALE (default 1):
 * `make sanitize` sets it, since its builds run several times slower.
 * It lengthens only the bounds, never what a test expects to happen. */
export const WAIT_SCALE = Math.max(1, Number(process.env.RELAY_WAIT_SCALE) || 1);

/* ms, as bound for a wait: scaled by WAIT_SCALE. */
export function waitBound(ms) {
  return ms * WAIT_SCALE;
}

/* Prefixes NIP-01 defines for OK and CLOSED messages. */
export const PREFIXES = [
  'duplicate', 'pow', 'blocked', 'rate-limited', 'invalid', 'restricted',
  'mute', 'error', 'auth-required',
];

/* The current unix time in whole seconds, as created_at takes it. */
export function now() {
  return Math.floor(Date.now() / 1000);
}

/* ---------------------------------------------------------------- client */

export class Client {
  constructor(ws, worker) {
    this.ws = ws;
    this.worker = worker; /* number from X-Relay-Worker, or null */
    this.inbox = [];
    this.challenges = [];
    this.challenge = null;
    this.waiters = new Set();
    this.closeInfo = null;
    ws.on('message', (data, isBinary) => this.#receive(data, isBinary));
    ws.on('close', (code, reason) => this.#closed(code, reason.toString()));
    ws.on('error', (err) => { this.lastError = err; });
  }

  /* Opens a websocket to url (must be ws://127.0.0.1:...).  Resolves once the
   * handshake completed; .worker holds the X-Relay-Worker header value.
   * headers go with the handshake (a Host naming another host, say).
   * perMessageDeflate goes to ws as it is (ws offers deflate by default);
   * .extensions holds the Sec-WebSocket-Extensions answer, or null. */
  static open(url, { timeout = DEFAULT_TIMEOUT_MS, headers = {}, perMessageDeflate } = {}) {
    if (!/^ws:\/\/127\.0\.0\.1:\d+\/?$/.test(url))
      throw new Error(`tests only connect to 127.0.0.1, not ${url}`);
    return Client.#connect(url, timeout, headers, perMessageDeflate);
  }

  /* The same over the Unix socket at path: a forwarder in a network
   * namespace of the test's own (lib/netns.mjs) carries it on to a relay
   * there. */
  static openUnix(path, { timeout = DEFAULT_TIMEOUT_MS, headers = {} } = {}) {
    return Client.#connect(`ws+unix:${path}:/`, timeout, headers);
  }

  static #connect(url, timeout, headers, perMessageDeflate) {
    return new Promise((resolve, reject) => {
      const options = { handshakeTimeout: waitBound(timeout), headers };
      if (perMessageDeflate !== undefined) options.perMessageDeflate = perMessageDeflate;
      const ws = new WebSocket(url, options);
      let worker = null, extensions = null;
      ws.once('upgrade', (res) => {
        const h = res.headers['x-relay-worker'];
        worker = h === undefined ? null : Number(h);
        extensions = res.headers['sec-websocket-extensions'] ?? null;
      });
      ws.once('open', () => {
        const c = new Client(ws, worker);
        c.extensions = extensions;
        resolve(c);
      });
      ws.once('error', (err) => reject(new Error(`connect ${url}: ${err.message}`)));
      ws.once('unexpected-response', (req, res) =>
        reject(new Error(`connect ${url}: HTTP ${res.statusCode} instead of 101`)));
    });
  }

  /* True while the websocket is open. */
  get isOpen() {
    return this.ws.readyState === WebSocket.OPEN;
  }

  #receive(data, isBinary) {
    const text = data.toString('utf8');
    let msg;
    try {
      msg = JSON.parse(text);
    } catch (err) {
      msg = { invalidJson: text, error: err.message };
    }
    if (isBinary) msg = { binaryFrame: text };
    /* NIP-42: a challenge is connection state, not a reply to anything; it
     * is kept in .challenges (the latest in .challenge) instead of the inbox. */
    if (Array.isArray(msg) && msg[0] === 'AUTH' && typeof msg[1] === 'string' && msg.length === 2) {
      this.challenges.push(msg[1]);
      this.challenge = msg[1];
      for (const w of this.waiters) w.check();
      return;
    }
    this.inbox.push(msg);
    for (const w of this.waiters) w.check();
  }

  #closed(code, reason) {
    this.closeInfo = { code, reason };
    for (const w of this.waiters) w.check();
  }

  /* Sends one frame: an array (JSON-encoded here) or a string sent verbatim. */
  send(frame) {
    this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  /* Resolves with the first inbox frame for which pred is true, removed
   * from the inbox, waiting up to timeout ms for it.  A pred that throws
   * counts as false.  Rejects on timeout, when the connection closes, or
   * when a frame that is not valid JSON arrives; the message names what
   * and lists the unmatched frames. */
  waitFor(pred, { timeout = DEFAULT_TIMEOUT_MS, what = 'a matching frame' } = {}) {
    timeout = waitBound(timeout);
    return new Promise((resolve, reject) => {
      const waiter = {
        check: () => {
          const i = this.inbox.findIndex((m) => safePred(pred, m));
          if (i >= 0) {
            const [m] = this.inbox.splice(i, 1);
            done();
            resolve(m);
          } else if (this.inbox.some((m) => m && m.invalidJson !== undefined)) {
            done();
            reject(new Error(`relay sent a frame that is not valid JSON while waiting for` +
              ` ${what}: ${show(this.inbox.filter((m) => m && m.invalidJson !== undefined))}`));
          } else if (this.closeInfo) {
            done();
            reject(new Error(`connection closed (code ${this.closeInfo.code}` +
              ` "${this.closeInfo.reason}") while waiting for ${what};` +
              ` unmatched frames: ${show(this.inbox)}`));
          }
        },
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out after ${timeout} ms waiting for ${what};` +
          ` unmatched frames: ${show(this.inbox)}`));
      }, timeout);
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      this.waiters.add(waiter);
      waiter.check();
    });
  }

  /* The next frame, whatever it is. */
  next(opts = {}) {
    return this.waitFor(() => true, { what: 'any frame', ...opts });
  }

  /* Removes and returns every frame already in the inbox matching pred. */
  take(pred = () => true) {
    const hit = this.inbox.filter((m) => safePred(pred, m));
    this.inbox = this.inbox.filter((m) => !safePred(pred, m));
    return hit;
  }

  /* Sends ["EVENT", event] and resolves with the OK naming event.id as
   * {id, ok, message}. */
  async publish(event, opts = {}) {
    this.send(['EVENT', event]);
    return this.okFor(event.id, opts);
  }

  /* Waits for the OK naming id; resolves {id, ok, message, frame}. */
  async okFor(id, opts = {}) {
    const m = await this.waitFor((f) => isArray(f) && f[0] === 'OK' && f[1] === id,
      { what: `["OK", "${id}", ...]`, ...opts });
    return { id: m[1], ok: m[2], message: m[3], frame: m };
  }

  /* Sends a raw EVENT frame (any text) and resolves with the first OK or
   * NOTICE that follows. */
  async publishRaw(text, opts = {}) {
    this.send(text);
    return this.waitFor((f) => isArray(f) && (f[0] === 'OK' || f[0] === 'NOTICE'),
      { what: 'OK or NOTICE', ...opts });
  }

  /* Publishes and asserts OK true; returns the event for chaining. */
  async mustPublish(event, opts = {}) {
    const r = await this.publish(event, opts);
    if (r.ok !== true)
      throw new Error(`expected OK true for ${event.id}, got ${JSON.stringify(r.frame)}`);
    return event;
  }

  /* Sends ["REQ", subid, ...filters] and collects the stored events until
   * EOSE or CLOSED for subid.  Resolves {events, eose, closed} where closed
   * is the CLOSED message text or null. */
  async req(subid, ...filters) {
    this.send(['REQ', subid, ...filters]);
    return this.collect(subid);
  }

  /* req() without the send: collects subid's events until its EOSE or
   * CLOSED. */
  async collect(subid, opts = {}) {
    const events = [];
    for (;;) {
      const m = await this.waitFor(
        (f) => isArray(f) && ['EVENT', 'EOSE', 'CLOSED'].includes(f[0]) && f[1] === subid,
        { what: `EOSE or CLOSED for ${JSON.stringify(subid)}`, ...opts });
      if (m[0] === 'EVENT') events.push(m[2]);
      else if (m[0] === 'EOSE') return { events, eose: true, closed: null };
      else return { events, eose: false, closed: m[2] };
    }
  }

  /* Waits for a live ["EVENT", subid, ev] whose event has the given id. */
  async liveEvent(subid, id, opts = {}) {
    const m = await this.waitFor(
      (f) => isArray(f) && f[0] === 'EVENT' && f[1] === subid && f[2] && f[2].id === id,
      { what: `["EVENT", ${JSON.stringify(subid)}, {id: ${id}}]`, ...opts });
    return m[2];
  }

  /* Sends ["CLOSE", subid] and waits for nothing. */
  closeSub(subid) {
    this.send(['CLOSE', subid]);
  }

  /* Closes the websocket and waits (bounded) for the close to complete. */
  async end({ timeout = 2000 } = {}) {
    if (this.closeInfo) return;
    await new Promise((resolve) => {
      const t = setTimeout(() => { this.ws.terminate(); resolve(); }, timeout);
      this.ws.once('close', () => { clearTimeout(t); resolve(); });
      this.ws.close();
    });
  }

  /* Resolves when the server closes the connection (bounded). */
  waitClosed({ timeout = DEFAULT_TIMEOUT_MS } = {}) {
    if (this.closeInfo) return Promise.resolve(this.closeInfo);
    timeout = waitBound(timeout);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`connection still open after ${timeout} ms`)),
        timeout);
      this.ws.once('close', () => { clearTimeout(t); resolve(this.closeInfo); });
    });
  }
}

/* True if frame f is a JSON array (a frame that is not JSON is an object). */
export function isArray(f) {
  return Array.isArray(f);
}

function safePred(pred, m) {
  try {
    return pred(m);
  } catch {
    return false;
  }
}

function show(frames) {
  const s = JSON.stringify(frames);
  return s.length > 2000 ? s.slice(0, 2000) + '...' : s;
}

/* ---------------------------------------------------------------- events */

/* A fresh random key pair: {sk: bytes, pk: 64 lowercase hex digits}. */
export function keypair() {
  const sk = generateSecretKey();
  return { sk, pk: getPublicKey(sk) };
}

/* A plain copy of an event: fields in canonical order, tags deep-copied,
 * and nostr-tools' cached "verified" symbol dropped. */
export function plain(ev) {
  return JSON.parse(JSON.stringify({
    id: ev.id, pubkey: ev.pubkey, created_at: ev.created_at, kind: ev.kind,
    tags: ev.tags, content: ev.content, sig: ev.sig,
  }));
}

/* A valid event signed by sk; the id is computed by nostr-tools. */
export function signed(sk, { kind = 1, created_at = now(), tags = [], content = '' } = {}) {
  return plain(finalizeEvent({ kind, created_at, tags, content }, sk));
}

/* NIP-01 serialization of a string: exactly seven characters are escaped,
 * everything else (other control characters, DEL, non-ASCII) is raw. */
const ESCAPES = {
  '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f',
};

/* s as NIP-01 serializes a string: quoted, with only ESCAPES escaped. */
export function canonicalString(s) {
  let out = '"';
  for (const ch of s) out += ESCAPES[ch] ?? ch;
  return out + '"';
}

function canonicalValue(v) {
  if (typeof v === 'string') return canonicalString(v);
  if (Array.isArray(v)) return '[' + v.map(canonicalValue).join(',') + ']';
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  throw new Error(`cannot serialize ${JSON.stringify(v)} canonically`);
}

/* The exact text NIP-01 hashes for an event's id. */
export function canonical(ev) {
  return canonicalValue([0, ev.pubkey, ev.created_at, ev.kind, ev.tags, ev.content]);
}

/* The id NIP-01 gives ev: the SHA-256, in hex, of canonical(ev). */
export function canonicalId(ev) {
  return createHash('sha256').update(canonical(ev), 'utf8').digest('hex');
}

/* A valid event whose id is computed by canonical() above rather than by
 * nostr-tools (which escapes control characters other than the seven as
 * \u00XX, as JSON.stringify does). */
export function signedCanonical(sk, { kind = 1, created_at = now(), tags = [], content = '' } = {}) {
  const ev = { pubkey: getPublicKey(sk), created_at, kind, tags, content };
  ev.id = canonicalId(ev);
  ev.sig = Buffer.from(schnorr.sign(Buffer.from(ev.id, 'hex'), sk)).toString('hex');
  return plain(ev);
}

/* True if ev's id is canonicalId(ev) and its sig verifies for its pubkey. */
export function verifyCanonical(ev) {
  return canonicalId(ev) === ev.id &&
    schnorr.verify(Buffer.from(ev.sig, 'hex'), Buffer.from(ev.id, 'hex'), Buffer.from(ev.pubkey, 'hex'));
}

/* Flips one hex digit at position i (keeps it lowercase hex). */
export function flipHex(hex, i = 0) {
  const c = hex[i] === '0' ? '1' : '0';
  return hex.slice(0, i) + c + hex.slice(i + 1);
}

/* Deliberately broken copies of a valid event.  Each takes a valid event
 * and returns a new plain object; none re-signs unless it says so. */
export const broken = {
  /* signature no longer matches (still 128 lowercase hex) */
  badSig: (ev) => ({ ...plain(ev), sig: flipHex(ev.sig, 10) }),
  /* id is well-formed but is not the hash of the content */
  badId: (ev) => ({ ...plain(ev), id: flipHex(ev.id, 5) }),
  /* content changed after signing: id and sig both stale */
  tampered: (ev) => ({ ...plain(ev), content: ev.content + 'x' }),
  /* a valid signature of a different event */
  foreignSig: (ev, other) => ({ ...plain(ev), sig: other.sig }),
  upperId: (ev) => ({ ...plain(ev), id: ev.id.toUpperCase() }),
  upperPubkey: (ev) => ({ ...plain(ev), pubkey: ev.pubkey.toUpperCase() }),
  upperSig: (ev) => ({ ...plain(ev), sig: ev.sig.toUpperCase() }),
  shortId: (ev) => ({ ...plain(ev), id: ev.id.slice(0, 63) }),
  longId: (ev) => ({ ...plain(ev), id: ev.id + '0' }),
  shortPubkey: (ev) => ({ ...plain(ev), pubkey: ev.pubkey.slice(0, 62) }),
  shortSig: (ev) => ({ ...plain(ev), sig: ev.sig.slice(0, 126) }),
  nonHexSig: (ev) => ({ ...plain(ev), sig: 'g' + ev.sig.slice(1) }),
  /* replaces (or with undefined, deletes) one field */
  with: (ev, field, value) => {
    const out = plain(ev);
    if (value === undefined) delete out[field];
    else out[field] = value;
    return out;
  },
};

/* JSON text of value with DEL and every non-ASCII UTF-16 unit written as
 * \uXXXX, so the frame on the wire is printable ASCII (emoji become
 * surrogate-pair escapes). */
export function asciiJson(value) {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

/* JSON text of value with "/" written as "\/" and the seven escapable
 * controls written as \u00XX instead of their short forms. */
export function longEscapeJson(value) {
  const long = { n: '\\u000a', r: '\\u000d', t: '\\u0009', b: '\\u0008', f: '\\u000c' };
  /* one left-to-right pass over escape pairs, so an escaped backslash
   * followed by the letter n is left alone */
  return JSON.stringify(value).replace(/\\(.)|\//g, (m, c) =>
    c === undefined ? '\\/' : (long[c] ?? m));
}

/* ---------------------------------------------------------------- NIP-45 */

/* Sends ["COUNT", id, ...filters] and resolves with the answer naming id:
 * {count, hll, frame} for a COUNT (hll undefined when absent), or
 * {closed: message, frame} for a CLOSED. */
Client.prototype.count = async function count(id, ...filters) {
  this.send(['COUNT', id, ...filters]);
  const m = await this.waitFor(
    (f) => isArray(f) && (f[0] === 'COUNT' || f[0] === 'CLOSED') && f[1] === id,
    { what: `COUNT or CLOSED for ${JSON.stringify(id)}` });
  if (m[0] === 'CLOSED') return { closed: m[2], frame: m };
  return { count: m[2] && m[2].count, hll: m[2] && m[2].hll, frame: m };
};

/* Removes and returns the ids of the EVENT frames for subid in the inbox. */
export function takeEventIds(client, subid) {
  return client.take((m) => isArray(m) && m[0] === 'EVENT' && m[1] === subid).map((m) => m[2].id);
}
