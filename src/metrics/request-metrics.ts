import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Registry, type Metric } from 'prom-client';
import { counter, gauge, histogram, type CustomMetric, type Sample } from './custom-metric.js';

/** The label values of the request metrics: fixed lists, so every counter lives at a fixed index of one typed array. */
export const ENDPOINTS = ['data', 'walk_forward', 'vintages', 'asof_join', 'other'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];
/** The endpoint label of each data route pattern (api-routes.ts); every other route is 'other'. */
const ENDPOINT_OF_PATTERN: ReadonlyMap<string, Endpoint> = new Map([
  ['/{product}/{dataset}', 'data'],
  ['/{product}/{dataset}/walk_forward', 'walk_forward'],
  ['/{product}/{dataset}/vintages', 'vintages'],
  ['/{product}/{dataset}/asof_join', 'asof_join'],
]);

export function endpointOfPattern(pattern: string): Endpoint {
  return ENDPOINT_OF_PATTERN.get(pattern) ?? 'other';
}
export const FORMATS = ['json', 'csv', 'arrow', 'none'] as const;
export type FormatLabel = (typeof FORMATS)[number];
/** Every status the API answers; anything else counts as 'other' (a bug worth alerting on). */
export const STATUSES = ['200', '304', '400', '401', '403', '404', '405', '406', '413', '415', '429', '500', '503', 'other'] as const;
/** Seconds. Answers run from tens of µs (cache hits) to seconds (100k-row walk-forward pages over slow links). */
export const LATENCY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
export const CACHES = ['response', 'row', 'page'] as const;
export type CacheName = (typeof CACHES)[number];
/**
 * declined: a rendered answer or row not kept on its first render (the row cache's doorkeeper, the response cache's frequency sketch had not seen it lately);
 * rejected: an answer not kept because the cache was full of answers asked for as often or more (response cache only)
 */
export const CACHE_EVENTS = ['hit', 'miss', 'eviction', 'declined', 'rejected'] as const;
export type CacheEvent = (typeof CACHE_EVENTS)[number];

const STATUS_INDEX = new Map<number, number>(STATUSES.slice(0, -1).map((s, i) => [Number(s), i]));
const ENDPOINT_INDEX = new Map<string, number>(ENDPOINTS.map((e, i) => [e, i]));
const FORMAT_INDEX = new Map<string, number>(FORMATS.map((f, i) => [f, i]));

/**
 * Request metrics of one serving thread. The hot path only adds to typed arrays at
 * precomputed offsets (no label hashing, no objects); prom-client reads them at scrape time
 * through collectors. Every serving thread has one; the main thread aggregates them
 * (AggregatorRegistry.aggregate sums series with equal labels), so /metrics is one view
 * across all threads.
 */
export class RequestMetrics {
  /** label value of the dataset dimension; the last one is '' (requests that name no dataset) */
  private datasets: readonly string[];
  private datasetIndex: Map<string, number>;
  private nD: number;
  /** [dataset][endpoint][format][status] */
  private requests: Float64Array;
  /** [dataset][endpoint][format] */
  private bytes: Float64Array;
  private rows: Float64Array;
  /** [endpoint][bucket] (cumulative at scrape time, not here), then sum and count per endpoint */
  private readonly latencyBuckets: Float64Array;
  private readonly latencySum: Float64Array;
  private readonly latencyCount: Float64Array;
  /** [cache][event] */
  private readonly cacheEvents = new Float64Array(CACHES.length * CACHE_EVENTS.length);
  /** by key id (never the key itself); 429s are a cold path */
  private readonly limited = new Map<string, number>();
  private throttled = 0;
  private readonly loop: IntervalHistogram;

  constructor(
    datasetIds: readonly string[],
    /** label of this serving thread in the event-loop lag gauge */
    private readonly thread: string,
  ) {
    this.datasets = [...datasetIds, ''];
    this.datasetIndex = new Map(datasetIds.map((d, i) => [d, i]));
    this.nD = this.datasets.length;
    this.requests = new Float64Array(this.nD * ENDPOINTS.length * FORMATS.length * STATUSES.length);
    this.bytes = new Float64Array(this.nD * ENDPOINTS.length * FORMATS.length);
    this.rows = new Float64Array(this.nD * ENDPOINTS.length * FORMATS.length);
    this.latencyBuckets = new Float64Array(ENDPOINTS.length * LATENCY_BUCKETS.length);
    this.latencySum = new Float64Array(ENDPOINTS.length);
    this.latencyCount = new Float64Array(ENDPOINTS.length);
    this.loop = monitorEventLoopDelay({ resolution: 10 });
    this.loop.enable();
  }

  /**
   * Datasets a new catalog added (contract 13) get their own label from now on: the arrays
   * grow, the counts so far stay (a removed dataset keeps its label: counters never go back).
   */
  addDatasets(ids: readonly string[]): void {
    const fresh = ids.filter((id) => !this.datasetIndex.has(id));
    if (fresh.length === 0) return;
    const oldND = this.nD;
    const named = this.datasets.slice(0, -1);
    this.datasets = [...named, ...fresh, ''];
    this.datasetIndex = new Map(this.datasets.slice(0, -1).map((d, i) => [d, i]));
    this.nD = this.datasets.length;
    const grow = (a: Float64Array, per: number): Float64Array => {
      const b = new Float64Array(this.nD * per);
      b.set(a.subarray(0, (oldND - 1) * per));
      b.set(a.subarray((oldND - 1) * per), (this.nD - 1) * per);
      return b;
    };
    const perDef = ENDPOINTS.length * FORMATS.length;
    this.requests = grow(this.requests, perDef * STATUSES.length);
    this.bytes = grow(this.bytes, perDef);
    this.rows = grow(this.rows, perDef);
  }

  /** One answered request. `dataset` is a slot id such as 'pemi/grid_stress', or '' when the path named none. */
  request(dataset: string, endpoint: Endpoint, format: FormatLabel, status: number, seconds: number, bytes: number, rows: number): void {
    const d = this.datasetIndex.get(dataset) ?? this.nD - 1;
    const e = ENDPOINT_INDEX.get(endpoint)!;
    const f = FORMAT_INDEX.get(format)!;
    const s = STATUS_INDEX.get(status) ?? STATUSES.length - 1;
    const def = (d * ENDPOINTS.length + e) * FORMATS.length + f;
    this.requests[def * STATUSES.length + s]! += 1;
    this.bytes[def]! += bytes;
    this.rows[def]! += rows;
    let b = 0;
    while (b < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[b]!) b++;
    if (b < LATENCY_BUCKETS.length) this.latencyBuckets[e * LATENCY_BUCKETS.length + b]! += 1;
    this.latencySum[e]! += seconds;
    this.latencyCount[e]! += 1;
  }

  cache(cache: CacheName, event: CacheEvent, n = 1): void {
    this.cacheEvents[CACHES.indexOf(cache) * CACHE_EVENTS.length + CACHE_EVENTS.indexOf(event)]! += n;
  }

  /**
   * The totals a cache keeps itself (ResponseCache, RowCache count their own hits), copied
   * in before a scrape: the hot path then pays nothing for cache metrics.
   */
  setCacheTotals(
    cache: CacheName,
    totals: { readonly hits: number; readonly misses: number; readonly evictions: number; readonly declined: number; readonly rejected?: number },
  ): void {
    const at = CACHES.indexOf(cache) * CACHE_EVENTS.length;
    this.cacheEvents[at + CACHE_EVENTS.indexOf('hit')] = totals.hits;
    this.cacheEvents[at + CACHE_EVENTS.indexOf('miss')] = totals.misses;
    this.cacheEvents[at + CACHE_EVENTS.indexOf('eviction')] = totals.evictions;
    this.cacheEvents[at + CACHE_EVENTS.indexOf('declined')] = totals.declined;
    this.cacheEvents[at + CACHE_EVENTS.indexOf('rejected')] = totals.rejected ?? 0;
  }

  rateLimited(keyId: string): void {
    this.limited.set(keyId, (this.limited.get(keyId) ?? 0) + 1);
  }

  /** A 429 to an address that failed authentication too often (no label: addresses are unbounded). */
  authThrottled(): void {
    this.throttled++;
  }

  /** A prom-client registry over this thread's numbers (read when scraped). */
  registry(): Registry {
    const r = new Registry();
    for (const m of this.collectors()) r.registerMetric(m as unknown as Metric);
    return r;
  }

  close(): void {
    this.loop.disable();
  }

  private collectors(): CustomMetric[] {
    const perDef = (array: () => Float64Array, name: string, help: string): CustomMetric =>
      counter(name, help, () => {
        const { datasets } = this;
        const arr = array();
        const values: Sample[] = [];
        for (let d = 0; d < datasets.length; d++)
          for (let e = 0; e < ENDPOINTS.length; e++)
            for (let f = 0; f < FORMATS.length; f++) {
              const v = arr[(d * ENDPOINTS.length + e) * FORMATS.length + f]!;
              if (v > 0) values.push({ labels: { dataset: datasets[d]!, endpoint: ENDPOINTS[e]!, format: FORMATS[f]! }, value: v });
            }
        return values;
      });
    return [
      counter('pitcache_requests_total', 'Answered requests by dataset, endpoint, format and status.', () => {
        const { datasets } = this;
        const values: Sample[] = [];
        for (let i = 0; i < this.requests.length; i++) {
          const v = this.requests[i]!;
          if (v === 0) continue;
          const s = i % STATUSES.length;
          const def = (i - s) / STATUSES.length;
          const f = def % FORMATS.length;
          const e = ((def - f) / FORMATS.length) % ENDPOINTS.length;
          const d = Math.floor(def / FORMATS.length / ENDPOINTS.length);
          values.push({ labels: { dataset: datasets[d]!, endpoint: ENDPOINTS[e]!, format: FORMATS[f]!, status: STATUSES[s]! }, value: v });
        }
        return values;
      }),
      perDef(() => this.bytes, 'pitcache_response_bytes_total', 'Body bytes sent (after compression) by dataset, endpoint and format.'),
      perDef(() => this.rows, 'pitcache_response_rows_total', 'Data rows sent by dataset, endpoint and format.'),
      histogram('pitcache_request_duration_seconds', 'Time from request to answer handed to the transport, by endpoint.', () => {
        const values: Sample[] = [];
        const bucket = 'pitcache_request_duration_seconds_bucket';
        for (let e = 0; e < ENDPOINTS.length; e++) {
          let cum = 0;
          const endpoint = ENDPOINTS[e]!;
          for (let b = 0; b < LATENCY_BUCKETS.length; b++) {
            cum += this.latencyBuckets[e * LATENCY_BUCKETS.length + b]!;
            values.push({ metricName: bucket, labels: { endpoint, le: String(LATENCY_BUCKETS[b]) }, value: cum });
          }
          values.push({ metricName: bucket, labels: { endpoint, le: '+Inf' }, value: this.latencyCount[e]! });
          values.push({ metricName: 'pitcache_request_duration_seconds_sum', labels: { endpoint }, value: this.latencySum[e]! });
          values.push({ metricName: 'pitcache_request_duration_seconds_count', labels: { endpoint }, value: this.latencyCount[e]! });
        }
        return values;
      }),
      counter(
        'pitcache_cache_events_total',
        'Cache lookups, evictions and declined admissions by cache (response, row) and event (hit, miss, eviction, declined: not kept on its first render, rejected: not kept because the full cache held answers asked for as often or more).',
        () => {
          const values: Sample[] = [];
          for (let c = 0; c < CACHES.length; c++)
            for (let ev = 0; ev < CACHE_EVENTS.length; ev++)
              values.push({ labels: { cache: CACHES[c]!, event: CACHE_EVENTS[ev]! }, value: this.cacheEvents[c * CACHE_EVENTS.length + ev]! });
          return values;
        },
      ),
      counter('pitcache_rate_limited_total', 'Requests refused with 429 by API key id (never the key).', () =>
        [...this.limited].map(([key_id, value]) => ({ labels: { key_id }, value })),
      ),
      counter(
        'pitcache_auth_throttled_total',
        'Requests refused with 429 because their client address failed authentication too often (--auth-fail-limit).',
        () => [{ labels: {}, value: this.throttled }],
      ),
      // Two gauges, not one with a quantile label: Prometheus reserves `quantile` for summaries.
      gauge('pitcache_event_loop_lag_p99_seconds', 'Event-loop delay p99 of a serving thread since the previous scrape.', () => {
        const p99 = this.loop.percentile(99) / 1e9;
        return [{ labels: { thread: this.thread }, value: Number.isFinite(p99) ? p99 : 0 }];
      }),
      gauge('pitcache_event_loop_lag_max_seconds', 'Event-loop delay maximum of a serving thread since the previous scrape.', () => {
        const max = this.loop.max / 1e9;
        this.loop.reset(); // read after p99 (metrics are collected in registration order)
        return [{ labels: { thread: this.thread }, value: Number.isFinite(max) ? max : 0 }];
      }),
    ];
  }
}
