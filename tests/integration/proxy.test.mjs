/*
 * proxy.test.mjs - the client's address behind a reverse proxy
 * (real_ip_header, trusted_proxies).
 *
 * Without nginx: a trusted peer's X-Forwarded-For names the client (the
 * right-most untrusted entry, across several header lines), and an
 * untrusted peer's header is ignored.  With limit_loopback = 0 only a
 * client whose own address is loopback is exempt from the limits.  With nginx: Debian's
 * nginx runs etc/nginx-relay.conf on a free loopback port with a
 * certificate made here; clients connect with wss:// from 127.0.0.2 and
 * 127.0.0.3, publish and subscribe, and max_connections_per_ip bites one
 * client without limiting the other.  nginx refuses /metrics.
 *
 * The relay logs each forwarded address at debug level: the tests wait for
 * that line.  limit_loopback = 1 elsewhere: every nginx client is loopback.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { useRelay, freePort, until, HOST } from './lib/relay.mjs';
import { Client, keypair, signed } from './lib/client.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const TEMPLATE = resolve(HERE, '../../etc/nginx-relay.conf');
const OPEN_TIMEOUT_MS = 5000;

/* A websocket to url with the given headers, from localAddress; resolves a
 * Client once open, or null when the handshake fails or the relay closes
 * it at once (a refused connection). */
function openWs(url, { headers = {}, localAddress, ca } = {}) {
  return new Promise((resolveP) => {
    const ws = new WebSocket(url, { headers, localAddress, ca, handshakeTimeout: OPEN_TIMEOUT_MS });
    ws.once('open', () => resolveP(new Client(ws, null)));
    ws.once('error', () => resolveP(null));
    ws.once('unexpected-response', () => resolveP(null));
  });
}

/* Whether the relay kept the connection: open, answering a REQ. */
async function served(c) {
  if (!c) return false;
  try {
    const r = await c.req('alive', { limit: 1 });
    return r.eose;
  } catch {
    return false; /* closed by the relay: refused after the handshake */
  }
}

/* A one-worker relay reading X-Forwarded-For, with the limits applied to
 * loopback and each forwarded address logged; extra keys override. */
function proxyRelay(extra) {
  return useRelay({
    workers: 1,
    config: { real_ip_header: 'X-Forwarded-For', limit_loopback: 1, log_level: 'debug', ...extra },
  });
}

/* Waits for the relay's debug line naming client as forwarded by a proxy. */
function forwardedLine(relay, mark, client) {
  const line = `connection from ${client} through proxy `;
  return until(() => relay.logs(mark).includes(line), { what: `the log line "${line}"` });
}

describe('real_ip_header from a trusted peer', () => {
  const relay = proxyRelay({ max_connections_per_ip: 1 });

  it('knows the client by the right-most untrusted X-Forwarded-For entry', async () => {
    const mark = relay.mark();
    const a = await openWs(relay.url, { headers: { 'X-Forwarded-For': '198.51.100.9, 203.0.113.5, 127.0.0.1' } });
    assert.equal(await served(a), true);
    await forwardedLine(relay, mark, '203.0.113.5');
    /* The same client again is past its one connection; another is not. */
    const again = await openWs(relay.url, { headers: { 'X-Forwarded-For': '203.0.113.5' } });
    assert.equal(await served(again), false);
    const other = await openWs(relay.url, { headers: { 'X-Forwarded-For': '203.0.113.6' } });
    assert.equal(await served(other), true);
    for (const c of [a, again, other]) if (c) await c.end();
  });

  it('reads several header lines as one list, the last line right-most', async () => {
    const mark = relay.mark();
    const c = await openWs(relay.url, { headers: { 'X-Forwarded-For': ['203.0.113.7', '2001:db8::7, ::1'] } });
    assert.equal(await served(c), true);
    await forwardedLine(relay, mark, '2001:db8::7');
    await c.end();
  });

  it('ignores a header of more lines than any chain of proxies writes', async () => {
    const mark = relay.mark();
    const lines = Array.from({ length: 20 }, (_, i) => `198.51.100.${i + 1}`);
    const c = await openWs(relay.url, { headers: { 'X-Forwarded-For': lines } });
    assert.equal(await served(c), true);
    assert.doesNotMatch(relay.logs(mark), /through proxy/);
    await c.end();
  });

  it('serves /metrics to a forwarded loopback client only', async () => {
    assert.equal((await relay.httpGet('/metrics', { 'X-Forwarded-For': '203.0.113.5' })).status, 403);
    assert.equal((await relay.httpGet('/metrics', { 'X-Forwarded-For': '127.0.0.5' })).status, 200);
    assert.equal((await relay.httpGet('/metrics')).status, 200);
  });
});

describe('real_ip_header with limit_loopback = 0', () => {
  const relay = proxyRelay({ limit_loopback: 0, max_connections_per_ip: 1 });

  it('exempts loopback clients only, not the proxy\'s forwarded ones', async () => {
    const local = [await openWs(relay.url), await openWs(relay.url, { headers: { 'X-Forwarded-For': '127.0.0.9' } })];
    const first = await openWs(relay.url, { headers: { 'X-Forwarded-For': '203.0.113.20' } });
    const second = await openWs(relay.url, { headers: { 'X-Forwarded-For': '203.0.113.20' } });
    for (const c of local) assert.equal(await served(c), true);
    assert.equal(await served(first), true);
    assert.equal(await served(second), false);
    for (const c of [...local, first, second]) if (c) await c.end();
  });
});

describe('real_ip_header from an untrusted peer', () => {
  const relay = proxyRelay({ trusted_proxies: '10.0.0.0/8', max_connections_per_ip: 1 });

  it('ignores the header: both clients count as 127.0.0.1', async () => {
    const mark = relay.mark();
    const a = await openWs(relay.url, { headers: { 'X-Forwarded-For': '203.0.113.5' } });
    assert.equal(await served(a), true);
    const b = await openWs(relay.url, { headers: { 'X-Forwarded-For': '203.0.113.6' } });
    assert.equal(await served(b), false);
    assert.doesNotMatch(relay.logs(mark), /through proxy/);
    for (const c of [a, b]) if (c) await c.end();
  });
});

/* The nginx binary, or null. */
function nginxBinary() {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx']) if (existsSync(p)) return p;
  return null;
}

/* Resolves once something accepts TCP connections on port. */
function listening(port) {
  return until(() => new Promise((resolveP) => {
    const s = tcpConnect({ host: HOST, port }, () => { s.destroy(); resolveP(true); });
    s.once('error', () => resolveP(false));
  }), { what: `nginx to listen on ${port}` });
}

/* etc/nginx-relay.conf with the test's port, relay and certificate. */
function nginxSite(port, relayPort, dir) {
  const text = readFileSync(TEMPLATE, 'utf8')
    .replace(/listen 443 ssl;/, `listen ${HOST}:${port} ssl;`)
    .replace(/proxy_pass http:\/\/127\.0\.0\.1:7777;/, `proxy_pass http://${HOST}:${relayPort};`)
    .replace(/ssl_certificate .*;/, `ssl_certificate ${join(dir, 'cert.pem')};`)
    .replace(/ssl_certificate_key .*;/, `ssl_certificate_key ${join(dir, 'key.pem')};`);
  assert.ok(text.includes(`${HOST}:${port}`) && text.includes(`${HOST}:${relayPort}`) &&
    text.includes(join(dir, 'key.pem')), 'the template changed: fix the substitutions');
  return text;
}

/* The nginx main config around the site file: everything under dir. */
function nginxMain(dir) {
  return [
    'worker_processes 1;',
    'events { worker_connections 256; }',
    'http {',
    `  access_log ${join(dir, 'access.log')};`,
    `  client_body_temp_path ${join(dir, 'body')};`,
    `  proxy_temp_path ${join(dir, 'proxy')};`,
    `  include ${join(dir, 'relay-site.conf')};`,
    '}',
    '',
  ].join('\n');
}

/* GET path through nginx over TLS; resolves {status, body}. */
function httpsGet(port, path, ca) {
  return new Promise((resolveP, reject) => {
    const req = httpsRequest({ host: HOST, port, path, ca, servername: 'localhost', timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolveP({ status: res.statusCode, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

describe('behind nginx', () => {
  const relay = proxyRelay({ trusted_proxies: '127.0.0.1/32', max_connections_per_ip: 2 });
  let dir, port, nginx, nginxLog = '', ca;

  before(async () => {
    const bin = nginxBinary();
    assert.ok(bin, 'nginx is not installed: run make deps (etc/install-deps.sh installs nginx-light)');
    dir = mkdtempSync(join(tmpdir(), 'relay-nginx-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
      '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', `subjectAltName=IP:${HOST},DNS:localhost`,
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore', timeout: 10000 });
    ca = readFileSync(join(dir, 'cert.pem'));
    port = await freePort();
    writeFileSync(join(dir, 'relay-site.conf'), nginxSite(port, relay.port, dir));
    writeFileSync(join(dir, 'nginx.conf'), nginxMain(dir));
    nginx = spawn(bin, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'),
      '-g', `daemon off; pid ${join(dir, 'nginx.pid')};`], { stdio: ['ignore', 'pipe', 'pipe'] });
    nginx.stdout.on('data', (d) => { nginxLog += d; });
    nginx.stderr.on('data', (d) => { nginxLog += d; });
    nginx.exited = new Promise((r) => nginx.once('exit', r));
    await Promise.race([listening(port), nginx.exited.then(() => {
      throw new Error(`nginx exited at start: ${nginxLog}`);
    })]);
  });

  after(async () => {
    if (nginx && nginx.exitCode === null && nginx.signalCode === null) {
      process.kill(nginx.pid, 'SIGTERM');
      const t = setTimeout(() => process.kill(nginx.pid, 'SIGKILL'), 5000);
      await nginx.exited;
      clearTimeout(t);
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const url = () => `wss://${HOST}:${port}/`;

  it('publishes and subscribes over wss://, each client known by its own address', async () => {
    const mark = relay.mark();
    /* A header the client forges is left of nginx's entry: never believed. */
    const reader = await openWs(url(), { localAddress: '127.0.0.3', ca, headers: { 'X-Forwarded-For': '198.51.100.1' } });
    assert.ok(reader, 'no wss:// connection through nginx');
    const sub = await reader.req('live', { kinds: [1], limit: 0 });
    assert.equal(sub.eose, true);
    const writer = await openWs(url(), { localAddress: '127.0.0.2', ca });
    assert.ok(writer);
    const ev = signed(keypair().sk, { content: 'through nginx' });
    await writer.mustPublish(ev);
    assert.equal((await reader.liveEvent('live', ev.id)).content, 'through nginx');
    const stored = await reader.req('stored', { ids: [ev.id] });
    assert.equal(stored.events.length, 1);
    await forwardedLine(relay, mark, '127.0.0.2');
    await forwardedLine(relay, mark, '127.0.0.3');
    assert.doesNotMatch(relay.logs(mark), /connection from 198\.51\.100\.1 /);
    await reader.end();
    await writer.end();
  });

  it('limits connections per client, not per proxy', async () => {
    const first = await openWs(url(), { localAddress: '127.0.0.2', ca });
    const second = await openWs(url(), { localAddress: '127.0.0.2', ca });
    assert.equal(await served(first), true);
    assert.equal(await served(second), true);
    /* 127.0.0.2 is at max_connections_per_ip = 2; through the same nginx,
     * 127.0.0.3 is not. */
    const third = await openWs(url(), { localAddress: '127.0.0.2', ca });
    assert.equal(await served(third), false);
    const other = await openWs(url(), { localAddress: '127.0.0.3', ca });
    assert.equal(await served(other), true);
    const ev = signed(keypair().sk, { content: 'the other client' });
    assert.equal((await other.publish(ev)).ok, true);
    for (const c of [first, second, third, other]) if (c) await c.end();
  });

  it('is the nginx block the README shows', () => {
    const readme = readFileSync(resolve(HERE, '../../README.md'), 'utf8');
    const block = readme.split('```nginx\n')[1].split('```')[0];
    const config = readFileSync(TEMPLATE, 'utf8').split('\n')
      .filter((l) => !/^\s*#/.test(l)).join('\n').replace(/\n{3,}/g, '\n\n').trim();
    assert.equal(block.trim(), config);
  });

  it('refuses /metrics at nginx', async () => {
    const r = await httpsGet(port, '/metrics', ca);
    assert.equal(r.status, 403);
    assert.match(r.body, /nginx/);
    const home = await httpsGet(port, '/', ca);
    assert.equal(home.status, 200);
  });
});
