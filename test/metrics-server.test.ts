/**
 * GET /metrics of a real server with two serving threads: admin keys only on the API port,
 * no key on --metrics-port, one view across both threads, counters equal to the requests
 * sent, promtool's lint passes, and a real Prometheus scrapes it.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, defaultKeysJson, startHarness, type Harness } from './support/harness.js';
import { startPrometheus, type RunningPrometheus } from './support/prometheus.js';
import { parsePromText, promtoolCheck, total, type PromSample } from './support/prom-text.js';

const LIMITED_KEY = 'test-key-limited-metrics';
const START_MS = Date.UTC(2026, 10, 20, 12, 0, 0);

const rows: PitRow[] = ['2026-03-02', '2026-03-03'].flatMap((date) =>
  ['DE', 'FR', 'NL'].map((zone) => ({ date, eff: date, obs: `${date}T06:00:00Z`, key: { bidding_zone: zone }, tag: `${zone}${date}`, value: 2.5 })),
);

interface Answer {
  readonly status: number;
  readonly id: string;
  readonly count: number;
  readonly bytes: number;
  readonly contentType: string;
  readonly text: string;
}

/** One request on a fresh connection (the kernel picks a serving thread each time), identity coding. */
function once(base: string, path: string, key: string | null): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { connection: 'close' };
    if (key !== null) headers['x-api-key'] = key;
    const req = request(base + path, { agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        resolve({
          status: res.statusCode ?? 0,
          id: String(res.headers['x-request-id']),
          count: Number(res.headers['x-count'] ?? 0),
          bytes: body.length,
          contentType: String(res.headers['content-type']),
          text: body.toString('utf8'),
        });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

let h: Harness;
let metricsBase: string;
let prom: RunningPrometheus | undefined;

beforeAll(async () => {
  h = await startHarness({
    datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows), generation: 3 }],
    keys: defaultKeysJson([{ id: 'limited', key: LIMITED_KEY, products: ['*'], rate_limit: { per_second: 1, burst: 2 } }]),
    // A manifest that is not JSON: one source error of kind manifest_invalid.
    prepare: async (dir) => {
      await mkdir(join(dir, 'glmi', 'marginality'), { recursive: true });
      await writeFile(join(dir, 'glmi', 'marginality', 'manifest.json'), '{"format": ');
    },
    server: { workers: 2, build: 'worker', metricsPort: 0, responseCacheBytes: 1 << 20 },
  });
  metricsBase = `http://127.0.0.1:${h.server.metricsPort}`;
});
afterAll(async () => {
  await prom?.stop();
  await h?.close();
});

async function scrape(): Promise<{ text: string; samples: PromSample[] }> {
  const r = await once(metricsBase, '/metrics', null);
  expect(r.status).toBe(200);
  return { text: r.text, samples: parsePromText(r.text) };
}

describe('GET /metrics', () => {
  it('on the API port: 401 without a key, 403 for a key that is not admin, the Prometheus text for an admin key', async () => {
    const none = await once(h.url, '/metrics', null);
    expect([none.status, JSON.parse(none.text).error.code]).toEqual([401, 'unauthorized']);
    const user = await once(h.url, '/metrics', TEST_KEY);
    expect([user.status, JSON.parse(user.text).error.code]).toEqual([403, 'forbidden']);
    const admin = await once(h.url, '/metrics', ADMIN_KEY);
    expect(admin.status).toBe(200);
    expect(admin.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(promtoolCheck(admin.text)).toBe('');
    expect(admin.text).toContain('# TYPE pitcache_requests_total counter');
  });

  it('on --metrics-port: without a key, only /metrics (GET or HEAD)', async () => {
    const r = await once(metricsBase, '/metrics', null);
    expect(r.status).toBe(200);
    expect(r.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(promtoolCheck(r.text)).toBe('');
    expect((await once(metricsBase, '/pemi/grid_stress', TEST_KEY)).status).toBe(404);
    const head = await fetch(`${metricsBase}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('counts the requests sent, across both serving threads, by dataset, endpoint, format and status', async () => {
    const before = (await scrape()).samples;
    const sent: Answer[] = [];
    for (let i = 0; i < 9; i++) sent.push(await once(h.url, '/pemi/grid_stress', TEST_KEY));
    for (let i = 0; i < 4; i++) sent.push(await once(h.url, '/pemi/grid_stress?format=csv', TEST_KEY));
    for (let i = 0; i < 3; i++) sent.push(await once(h.url, '/pemi/grid_stress?format=arrow&latest=false', TEST_KEY));
    for (let i = 0; i < 2; i++) sent.push(await once(h.url, '/pemi/grid_stress?as_of=bad', TEST_KEY));
    for (let i = 0; i < 5; i++) sent.push(await once(h.url, '/pemi/grid_stress', null));
    for (let i = 0; i < 6; i++) sent.push(await once(h.url, '/nope/grid_stress', TEST_KEY));
    const history: Answer[] = [];
    for (let i = 0; i < 3; i++)
      history.push(await once(h.url, '/pemi/grid_stress/walk_forward?decision_from=2026-03-01&decision_to=2026-03-05&format=csv', TEST_KEY));
    for (let i = 0; i < 2; i++) history.push(await once(h.url, '/pemi/grid_stress/vintages?release=x', TEST_KEY));
    const limited: Answer[] = [];
    for (let i = 0; i < 7; i++) limited.push(await once(h.url, '/pemi/grid_stress', LIMITED_KEY));
    // The kernel spread the connections over both threads (the request id's prefix names the thread).
    expect(new Set([...sent, ...limited].map((r) => r.id.slice(0, 12))).size).toBe(2);
    expect(limited.filter((r) => r.status === 429)).toHaveLength(5);

    const { text, samples: after } = await scrape();
    expect(promtoolCheck(text)).toBe('');
    const delta = (name: string, where: Record<string, string>): number => total(after, name, where) - total(before, name, where);
    const req = (dataset: string, endpoint: string, format: string, status: string) => delta('pitcache_requests_total', { dataset, endpoint, format, status });

    expect(req('pemi/grid_stress', 'data', 'json', '200')).toBe(9 + 2);
    expect(req('pemi/grid_stress', 'data', 'csv', '200')).toBe(4);
    expect(req('pemi/grid_stress', 'data', 'arrow', '200')).toBe(3);
    expect(req('pemi/grid_stress', 'data', 'none', '400')).toBe(2);
    expect(req('pemi/grid_stress', 'data', 'none', '401')).toBe(5);
    expect(req('pemi/grid_stress', 'data', 'none', '429')).toBe(5);
    expect(req('', 'other', 'none', '404')).toBe(6);
    expect(req('pemi/grid_stress', 'walk_forward', 'csv', '200')).toBe(3);
    expect(req('pemi/grid_stress', 'vintages', 'none', '400')).toBe(2);
    expect(delta('pitcache_response_rows_total', { dataset: 'pemi/grid_stress', format: 'csv' })).toBe(
      [...sent, ...history].filter((r) => r.status === 200 && r.contentType.startsWith('text/csv')).reduce((n, r) => n + r.count, 0),
    );
    expect(delta('pitcache_requests_total', { dataset: 'pemi/grid_stress' })).toBe(sent.length - 6 + history.length + limited.length);

    // Bytes and rows out: what the clients received, and what x-count said.
    const ok = [...sent, ...limited].filter((r) => r.status === 200);
    const okJson = ok.filter((r) => r.contentType.startsWith('application/json'));
    expect(delta('pitcache_response_rows_total', { dataset: 'pemi/grid_stress', format: 'json' })).toBe(okJson.reduce((n, r) => n + r.count, 0));
    expect(delta('pitcache_response_rows_total', { dataset: 'pemi/grid_stress' })).toBe(
      [...ok, ...history.filter((r) => r.status === 200)].reduce((n, r) => n + r.count, 0),
    );
    expect(delta('pitcache_response_rows_total', { dataset: 'pemi/grid_stress', format: 'arrow' })).toBe(3 * rows.length);
    const allBytes = [...sent, ...history, ...limited].reduce((n, r) => n + r.bytes, 0);
    expect(delta('pitcache_response_bytes_total', {})).toBe(allBytes);

    // The latency histogram saw each request once (the manual clock stands still: all in the first bucket).
    expect(delta('pitcache_request_duration_seconds_count', { endpoint: 'data' })).toBe(sent.length - 6 + limited.length);
    expect(delta('pitcache_request_duration_seconds_bucket', { endpoint: 'data', le: '0.0001' })).toBe(sent.length - 6 + limited.length);

    // Rate-limited requests by key id, never the key itself.
    expect(delta('pitcache_rate_limited_total', { key_id: 'limited' })).toBe(5);
    expect(text).not.toContain(LIMITED_KEY);

    // The response cache was asked once per 200 (JSON, CSV and, identity-coded, Arrow).
    const asked =
      delta('pitcache_cache_events_total', { cache: 'response', event: 'hit' }) + delta('pitcache_cache_events_total', { cache: 'response', event: 'miss' });
    expect(asked).toBe(9 + 2 + 4 + 3 + 3); // and the 3 walk_forward CSV answers
    expect(delta('pitcache_cache_events_total', { cache: 'response', event: 'hit' })).toBeGreaterThan(0);
  });

  it('says, per dataset, what is served and how the source answered; and the event-loop lag of each serving thread', async () => {
    const { samples } = await scrape();
    const of = (name: string, dataset: string): number | undefined => samples.find((s) => s.name === name && s.labels['dataset'] === dataset)?.value;
    expect(of('pitcache_dataset_generation', 'pemi/grid_stress')).toBe(3);
    expect(of('pitcache_dataset_rows', 'pemi/grid_stress')).toBe(rows.length);
    expect(of('pitcache_dataset_bytes', 'pemi/grid_stress')).toBeGreaterThan(0);
    expect(of('pitcache_dataset_loaded', 'pemi/grid_stress')).toBe(1);
    expect(of('pitcache_dataset_loaded', 'glmi/marginality')).toBe(0);
    expect(of('pitcache_dataset_generation', 'glmi/marginality')).toBeUndefined();
    expect(of('pitcache_dataset_load_duration_seconds', 'pemi/grid_stress')).toBeGreaterThanOrEqual(0);
    expect(of('pitcache_dataset_loaded_timestamp_seconds', 'pemi/grid_stress')).toBe(START_MS / 1000);
    expect(of('pitcache_dataset_last_success_timestamp_seconds', 'pemi/grid_stress')).toBe(START_MS / 1000);
    expect(of('pitcache_dataset_last_success_timestamp_seconds', 'glmi/marginality')).toBeUndefined();
    expect(total(samples, 'pitcache_source_errors_total', { dataset: 'glmi/marginality', kind: 'manifest_invalid' })).toBe(1);
    // The seven datasets without a manifest: one check each at start-up.
    expect(total(samples, 'pitcache_source_errors_total', { kind: 'manifest_missing' })).toBe(7);
    expect(total(samples, 'pitcache_source_errors_total', { dataset: 'pemi/grid_stress' })).toBe(0);
    const threads = samples.filter((s) => s.name === 'pitcache_event_loop_lag_max_seconds').map((s) => s.labels['thread']);
    expect(threads.sort()).toEqual(['0', '1']);
  });

  it('counts the garbage collection and heap allocation of each serving thread apart', async () => {
    const { samples } = await scrape();
    for (const thread of ['0', '1']) {
      // Every kind is exposed for every thread (whether a thread has collected yet depends on its
      // traffic; counting itself is tested with forced collections in metrics-gc.test.ts).
      for (const kind of ['scavenge', 'mark_compact', 'incremental', 'weak_callbacks']) {
        expect(
          samples.find((s) => s.name === 'pitcache_gc_total' && s.labels['thread'] === thread && s.labels['kind'] === kind)?.value,
          kind,
        ).toBeGreaterThanOrEqual(0);
        expect(
          samples.find((s) => s.name === 'pitcache_gc_pause_seconds_total' && s.labels['thread'] === thread && s.labels['kind'] === kind)?.value,
          kind,
        ).toBeGreaterThanOrEqual(0);
      }
      expect(total(samples, 'pitcache_heap_allocated_bytes_total', { thread }), thread).toBeGreaterThan(0);
      expect(total(samples, 'pitcache_heap_external_bytes', { thread }), thread).toBeGreaterThan(0);
    }
    // Answering requests allocates (headers, ids): the counter of the threads only grows.
    const first = total((await scrape()).samples, 'pitcache_heap_allocated_bytes_total', {});
    for (let i = 0; i < 20; i++) await once(h.url, '/pemi/grid_stress', TEST_KEY);
    expect(total((await scrape()).samples, 'pitcache_heap_allocated_bytes_total', {})).toBeGreaterThan(first);
  });

  it('is scraped by a real Prometheus on --metrics-port', async () => {
    prom = await startPrometheus([`127.0.0.1:${h.server.metricsPort}`]);
    await prom.waitUp(1);
    const gen = await prom.query('pitcache_dataset_generation');
    expect(gen.map((s) => [s.metric['dataset'], s.value[1]])).toEqual([['pemi/grid_stress', '3']]);
    const lag = await prom.query('pitcache_event_loop_lag_p99_seconds');
    expect(lag.map((s) => s.metric['thread']).sort()).toEqual(['0', '1']);
  }, 60_000);
});
