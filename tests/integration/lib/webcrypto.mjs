/*
 * webcrypto.mjs - gives Node 18 the global `crypto` that Node 20 has.
 *
 * Importing it for its effect sets globalThis.crypto to node:crypto's
 * webcrypto object when there is none, and changes nothing on Node 20.
 * Why: Debian 12 ships Node 18, and @noble/hashes (under nostr-tools'
 * generateSecretKey) draws its random bytes from globalThis.crypto.
 * It reads that at each call, so the order of imports does not matter.
 */
import { webcrypto } from 'node:crypto';

if (typeof globalThis.crypto?.getRandomValues !== 'function') {
  Object.defineProperty(globalThis, 'crypto', {
    value: webcrypto, writable: true, configurable: true, enumerable: false,
  });
}
