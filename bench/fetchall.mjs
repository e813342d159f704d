// bench/fetchall.mjs URL - what a client without NIP-77 does to get every
// event of a relay: REQ pages of the relay's limit, walking `until` down
// from now, until a page brings nothing new.  Prints one line
// FETCHALL events=N pages=P bytes_in=B bytes_out=B seconds=S.
// Uses the `ws` package the integration tests install
// (tests/integration: npm ci).
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, '../tests/integration/package.json'));
const WebSocket = require('ws');

const url = process.argv[2];
if (!/^ws:\/\/127\.0\.0\.1:\d+\/?$/.test(url || '')) {
  console.error('usage: node bench/fetchall.mjs ws://127.0.0.1:PORT');
  process.exit(2);
}
const ws = new WebSocket(url, { perMessageDeflate: false });
const seen = new Set();
let until = Math.floor(Date.now() / 1000) + 3600, pages = 0, bytesIn = 0, bytesOut = 0;
let fresh = 0, oldest = until;
const started = process.hrtime.bigint();

function page() {
  const msg = JSON.stringify(['REQ', `p${pages}`, { until }]);
  bytesOut += msg.length;
  fresh = 0;
  ws.send(msg);
}

ws.on('open', page);
ws.on('message', (data) => {
  bytesIn += data.length;
  const m = JSON.parse(data.toString());
  if (m[0] === 'EVENT') {
    if (!seen.has(m[2].id)) { seen.add(m[2].id); fresh++; }
    if (m[2].created_at < oldest) oldest = m[2].created_at;
  } else if (m[0] === 'EOSE' || m[0] === 'CLOSED') {
    pages++;
    ws.send(JSON.stringify(['CLOSE', m[1]]));
    if (fresh === 0) {
      const s = Number(process.hrtime.bigint() - started) / 1e9;
      console.log(`FETCHALL events=${seen.size} pages=${pages} bytes_in=${bytesIn} bytes_out=${bytesOut} seconds=${s.toFixed(3)}`);
      ws.close();
      return;
    }
    until = oldest; /* inclusive: ties at the boundary come again, deduplicated */
    page();
  }
});
ws.on('error', (e) => { console.error(e.message); process.exit(1); });
