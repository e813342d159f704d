/*
 * http.test.mjs - the plain HTTP side of a worker: /metrics (Prometheus
 * text for the whole relay, from any worker), /stats.json (live figures),
 * the HTML status page, 404 for other paths, CORS headers on /stats.json
 * and the 404.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { useRelay, until } from './lib/relay.mjs';
import { metricValue } from './lib/metrics.mjs';
import { keypair, signed } from './lib/client.mjs';

describe('HTTP endpoints', () => {
  const relay = useRelay({ workers: 2, config: { relay_name: 'metrics <test> relay' } });

  it('/metrics covers the whole relay from either worker, with Prometheus conventions', async () => {
    const kp = keypair();
    const c = await relay.connect();
    for (let i = 0; i < 3; i++) assert.equal((await c.publish(signed(kp.sk, { content: `m${i}` }))).ok, true);
    let text = '';
    await until(async () => {
      text = (await relay.httpGet('/metrics')).body;
      /* Workers report their latencies each second; stored publishes each second. */
      return metricValue(text, 'relay_events_accepted_total') >= 3 && metricValue(text, 'relay_ok_latency_seconds_count') >= 3;
    }, { timeout: 6000, interval: 200, what: 'relay_events_accepted_total and relay_ok_latency_seconds_count >= 3' });
    for (const name of ['relay_events_accepted_total', 'relay_queries_total', 'relay_commits_total'])
      assert.match(text, new RegExp(`# TYPE ${name} counter`));
    assert.match(text, /# TYPE relay_ok_latency_seconds histogram/);
    assert.match(text, /relay_ok_latency_seconds_bucket\{le="\+Inf"\} [1-9]/);
    assert.match(text, /# TYPE relay_query_latency_seconds histogram/);
    assert.match(text, /relay_worker_connections\{worker="1"\}/);
    assert.match(text, /relay_worker_connections\{worker="2"\}/);
    for (const line of text.split('\n').filter((l) => l.startsWith('# TYPE ') && l.endsWith(' counter')))
      assert.match(line, /_total counter$/, line);
    assert.equal(metricValue(text, 'relay_workers_connected'), 2);
  });

  it('/stats.json has the live figures the status page shows', async () => {
    const r = await relay.httpGet('/stats.json');
    assert.equal(r.status, 200);
    const s = JSON.parse(r.body);
    for (const k of ['connections', 'events_stored', 'events_per_second', 'subscriptions', 'workers'])
      assert.equal(typeof s[k], 'number', k);
    assert.equal(r.headers['access-control-allow-origin'], '*');
  });

  it('a browser gets the status page, with the name escaped inside it', async () => {
    const r = await relay.httpGet('/', { Accept: 'text/html' });
    assert.equal(r.status, 200);
    assert.match(r.headers['content-type'], /^text\/html/);
    assert.match(r.body, /<!doctype html>/i);
    assert.match(r.body, /metrics \\u003ctest> relay/);
    assert.doesNotMatch(r.body, /metrics <test> relay/);
    /* NIP-11's software URL is data in the page, not an asset it loads. */
    assert.doesNotMatch(r.body, /(src|href)\s*=\s*["']?https?:|url\(\s*["']?https?:|@import/i,
      'the page loads no external assets');
  });

  it('other paths are 404 with CORS headers', async () => {
    const r = await relay.httpGet('/nope');
    assert.equal(r.status, 404);
    assert.equal(r.headers['access-control-allow-origin'], '*');
  });
});
