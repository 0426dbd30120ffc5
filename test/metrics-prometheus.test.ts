import { afterAll, describe, expect, it } from 'vitest';
import type { UwsServer } from '../src/http/uws-server.js';
import { prometheusText } from '../src/metrics/aggregate.js';
import { listenMetrics } from '../src/metrics/metrics-server.js';
import { RequestMetrics } from '../src/metrics/request-metrics.js';
import { startPrometheus, type RunningPrometheus } from './support/prometheus.js';

let server: UwsServer | undefined;
let prom: RunningPrometheus | undefined;
afterAll(async () => {
  server?.close();
  await prom?.stop();
});

describe('the metrics port scraped by a real Prometheus', () => {
  it('serves only GET /metrics, without a key, and Prometheus ingests the joined view of two threads', async () => {
    const a = new RequestMetrics(['pemi/grid_stress'], '0');
    const b = new RequestMetrics(['pemi/grid_stress'], '1');
    a.request('pemi/grid_stress', 'data', 'json', 200, 0.001, 100, 1);
    b.request('pemi/grid_stress', 'data', 'csv', 200, 0.002, 300, 3);
    b.request('pemi/grid_stress', 'data', 'csv', 200, 0.002, 300, 3);
    let id = 0;
    server = await listenMetrics(
      '127.0.0.1',
      0,
      async () => prometheusText([await a.registry().getMetricsAsJSON(), await b.registry().getMetricsAsJSON()]),
      () => `req_${String(++id).padStart(16, '0')}`,
    );

    const other = await fetch(`http://127.0.0.1:${server.port}/pemi/grid_stress`);
    expect(other.status).toBe(404);
    const post = await fetch(`http://127.0.0.1:${server.port}/metrics`, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const direct = await fetch(`http://127.0.0.1:${server.port}/metrics`);
    expect(direct.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');

    prom = await startPrometheus([`127.0.0.1:${server.port}`]);
    await prom.waitUp(1);
    const csv = await prom.query('pitcache_requests_total{format="csv"}');
    expect(csv.map((s) => [s.metric['dataset'], s.metric['status'], s.value[1]])).toEqual([['pemi/grid_stress', '200', '2']]);
    const all = await prom.query('sum(pitcache_requests_total)');
    expect(all[0]?.value[1]).toBe('3');
    const threads = await prom.query('pitcache_event_loop_lag_max_seconds');
    expect(threads.map((s) => s.metric['thread']).sort()).toEqual(['0', '1']);
    a.close();
    b.close();
  }, 60_000);
});
