import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { prometheusText } from '../src/metrics/aggregate.js';
import { RequestMetrics, endpointOfPattern } from '../src/metrics/request-metrics.js';

/** promtool from Debian's prometheus package (.ci/run installs it). */
function promtoolCheck(text: string): string {
  return execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('request metrics of a serving thread', () => {
  it('count requests, bytes, rows and latency by their labels, and cache events and 429s by key id', async () => {
    const m = new RequestMetrics(['pemi/grid_stress', 'glmi/marginality'], '0');
    m.request('pemi/grid_stress', 'data', 'json', 200, 0.0003, 1000, 10);
    m.request('pemi/grid_stress', 'data', 'json', 200, 0.002, 500, 5);
    m.request('glmi/marginality', 'walk_forward', 'arrow', 200, 0.02, 7000, 700);
    m.request('', 'other', 'none', 404, 0.00001, 90, 0);
    m.request('pemi/grid_stress', 'data', 'csv', 418, 0.00001, 90, 0);
    m.cache('response', 'hit', 3);
    m.cache('row', 'eviction');
    m.rateLimited('farm-a');
    m.rateLimited('farm-a');
    const text = await m.registry().metrics();
    m.close();
    expect(sample(text, 'pitcache_requests_total{dataset="pemi/grid_stress",endpoint="data",format="json",status="200"}')).toBe(2);
    expect(sample(text, 'pitcache_requests_total{dataset="glmi/marginality",endpoint="walk_forward",format="arrow",status="200"}')).toBe(1);
    expect(sample(text, 'pitcache_requests_total{dataset="",endpoint="other",format="none",status="404"}')).toBe(1);
    expect(sample(text, 'pitcache_requests_total{dataset="pemi/grid_stress",endpoint="data",format="csv",status="other"}')).toBe(1);
    expect(sample(text, 'pitcache_response_bytes_total{dataset="pemi/grid_stress",endpoint="data",format="json"}')).toBe(1500);
    expect(sample(text, 'pitcache_response_rows_total{dataset="glmi/marginality",endpoint="walk_forward",format="arrow"}')).toBe(700);
    expect(sample(text, 'pitcache_request_duration_seconds_bucket{endpoint="data",le="0.00025"}')).toBe(1);
    expect(sample(text, 'pitcache_request_duration_seconds_bucket{endpoint="data",le="0.0005"}')).toBe(2);
    expect(sample(text, 'pitcache_request_duration_seconds_bucket{endpoint="data",le="0.0025"}')).toBe(3);
    expect(sample(text, 'pitcache_request_duration_seconds_bucket{endpoint="data",le="+Inf"}')).toBe(3);
    expect(sample(text, 'pitcache_request_duration_seconds_count{endpoint="walk_forward"}')).toBe(1);
    expect(sample(text, 'pitcache_request_duration_seconds_sum{endpoint="data"}')).toBeCloseTo(0.00231, 8);
    expect(sample(text, 'pitcache_cache_events_total{cache="response",event="hit"}')).toBe(3);
    expect(sample(text, 'pitcache_cache_events_total{cache="row",event="eviction"}')).toBe(1);
    expect(sample(text, 'pitcache_rate_limited_total{key_id="farm-a"}')).toBe(2);
    expect(text).toMatch(/pitcache_event_loop_lag_p99_seconds\{thread="0"\} [0-9.e-]+/);
    expect(text).toMatch(/pitcache_event_loop_lag_max_seconds\{thread="0"\} [0-9.e-]+/);
    expect(promtoolCheck(text)).toBe('');
  });

  it('two threads join into one view: equal series are summed, per-thread gauges stay apart; promtool accepts it', async () => {
    const a = new RequestMetrics(['pemi/grid_stress'], '0');
    const b = new RequestMetrics(['pemi/grid_stress'], '1');
    a.request('pemi/grid_stress', 'data', 'json', 200, 0.001, 100, 1);
    b.request('pemi/grid_stress', 'data', 'json', 200, 0.001, 300, 3);
    b.rateLimited('k');
    const text = await prometheusText([await a.registry().getMetricsAsJSON(), await b.registry().getMetricsAsJSON()]);
    a.close();
    b.close();
    expect(sample(text, 'pitcache_requests_total{dataset="pemi/grid_stress",endpoint="data",format="json",status="200"}')).toBe(2);
    expect(sample(text, 'pitcache_response_bytes_total{dataset="pemi/grid_stress",endpoint="data",format="json"}')).toBe(400);
    expect(sample(text, 'pitcache_request_duration_seconds_count{endpoint="data"}')).toBe(2);
    expect(sample(text, 'pitcache_rate_limited_total{key_id="k"}')).toBe(1);
    expect(text).toContain('pitcache_event_loop_lag_max_seconds{thread="0"}');
    expect(text).toContain('pitcache_event_loop_lag_max_seconds{thread="1"}');
    expect(promtoolCheck(text)).toBe('');
  });

  it("takes the caches' own totals before a scrape (set, not added), and labels routes by their pattern", async () => {
    const m = new RequestMetrics([], '0');
    m.setCacheTotals('response', { hits: 7, misses: 3, evictions: 1, declined: 2 });
    m.setCacheTotals('response', { hits: 9, misses: 4, evictions: 1, declined: 3, rejected: 6 });
    m.setCacheTotals('row', { hits: 100, misses: 20, evictions: 5, declined: 11 });
    const text = await m.registry().metrics();
    m.close();
    expect(sample(text, 'pitcache_cache_events_total{cache="response",event="hit"}')).toBe(9);
    expect(sample(text, 'pitcache_cache_events_total{cache="response",event="miss"}')).toBe(4);
    expect(sample(text, 'pitcache_cache_events_total{cache="row",event="miss"}')).toBe(20);
    expect(sample(text, 'pitcache_cache_events_total{cache="row",event="eviction"}')).toBe(5);
    expect(sample(text, 'pitcache_cache_events_total{cache="response",event="declined"}')).toBe(3);
    expect(sample(text, 'pitcache_cache_events_total{cache="row",event="declined"}')).toBe(11);
    expect(sample(text, 'pitcache_cache_events_total{cache="response",event="rejected"}')).toBe(6);
    // The row cache has no frequency admission: its rejected count is 0, not absent.
    expect(sample(text, 'pitcache_cache_events_total{cache="row",event="rejected"}')).toBe(0);
    expect(
      ['/{product}/{dataset}', '/{product}/{dataset}/walk_forward', '/{product}/{dataset}/vintages', '/metrics', '/readyz'].map(endpointOfPattern),
    ).toEqual(['data', 'walk_forward', 'vintages', 'other', 'other']);
  });
});
