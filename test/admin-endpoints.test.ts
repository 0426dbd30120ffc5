/**
 * The operational endpoints (contract 7: admin keys only): POST /admin/refresh says what
 * changed, GET /admin/status says what each dataset serves and how its last check went.
 * The server reads S3 (s3rver) through the fault proxy; time is a ManualClock.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { expectError, pitSnapshot, rowsOf } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, request } from './support/harness.js';
import { ALL_ROWS, GRID_ID, T0, expectedValues, publish, serve, startS3World, type S3World, type Served } from './support/s3-harness.js';

const EU = { productId: 'gbsi_eu', dataset: 'system_stress' };
const EU_ROWS = [
  { key: { country: 'DE' }, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 'de' },
  { key: { country: 'FR' }, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 'fr' },
];
const iso = (ms: number): string => new Date(ms).toISOString();
type Entry = { dataset: string; outcome: string; generation_before: number | null; generation_after: number | null; error: string | null };
const entry = (body: { datasets: Entry[] }, id: string): Entry => body.datasets.find((d) => d.dataset === id)!;

let world: S3World;
let s: Served;
const clock = new ManualClock(T0);

beforeAll(async () => {
  world = await startS3World('admin');
  await publish(world.publisher, 1);
  await writeGeneration(world.publisher, EU, buildArrowSnapshot(pitSnapshot(['country'], EU_ROWS)), 1, '2026-11-01T00:00:00Z');
  // Room for every superseded generation of these small datasets.
  s = await serve(world.openSource(), { clock, retainMemory: { kind: 'bytes', bytes: 2 ** 30 } });
});
afterAll(async () => {
  await s?.close();
  await world?.close();
});

describe('POST /admin/refresh', () => {
  it('answers what changed: the changed list and, per dataset, the outcome and the generation before and after', async () => {
    await publish(world.publisher, 2);
    clock.advance(1000);
    const r = await s.refresh();
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.body.changed).toEqual([GRID_ID]);
    expect(r.body.datasets).toHaveLength(9);
    expect(entry(r.body, GRID_ID)).toEqual({ dataset: GRID_ID, outcome: 'loaded', generation_before: 1, generation_after: 2, error: null });
    expect(entry(r.body, 'gbsi_eu/system_stress')).toEqual({
      dataset: 'gbsi_eu/system_stress',
      outcome: 'unchanged',
      generation_before: 1,
      generation_after: 1,
      error: null,
    });
    expect(entry(r.body, 'glmi/marginality')).toMatchObject({ outcome: 'missing', generation_before: null, generation_after: null });
    expect(rowsOf(await s.get(ALL_ROWS)).map((row) => row['value'])).toEqual(expectedValues(2));

    const again = await s.refresh();
    expect(again.body.changed).toEqual([]);
    expect(entry(again.body, GRID_ID)).toMatchObject({ outcome: 'unchanged', generation_before: 2, generation_after: 2, error: null });
  });

  it('needs an admin key: none is 401, a data key is 403, GET is 405 (Allow: POST); a refused call refreshes nothing', async () => {
    await publish(world.publisher, 3);
    expectError(await s.get('/admin/refresh', null, { method: 'POST' }), 401, 'unauthorized', undefined);
    expectError(await s.get('/admin/refresh', 'not-a-key', { method: 'POST' }), 401, 'unauthorized', undefined);
    expectError(await s.get('/admin/refresh', TEST_KEY, { method: 'POST' }), 403, 'forbidden', undefined);
    const get = await s.get('/admin/refresh', ADMIN_KEY);
    expectError(get, 405, 'method_not_allowed', undefined);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await s.status()).generation).toBe(2);
    expect((await s.refresh()).body.changed).toEqual([GRID_ID]);
  });
});

describe('GET /admin/status', () => {
  it('needs an admin key too, and answers GET and HEAD only; other /admin paths are 404', async () => {
    expectError(await s.get('/admin/status', null), 401, 'unauthorized', undefined);
    expectError(await s.get('/admin/status', TEST_KEY), 403, 'forbidden', undefined);
    const post = await s.get('/admin/status', ADMIN_KEY, { method: 'POST' });
    expectError(post, 405, 'method_not_allowed', undefined);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await s.get('/admin/status', ADMIN_KEY, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
    expectError(await s.get('/admin/nothing', ADMIN_KEY), 404, 'not_found', undefined);
  });

  it("shows each dataset's generation, row count, load time, last check and last error", async () => {
    const loadedAt = clock.now();
    const r = await s.get('/admin/status', ADMIN_KEY);
    expect(r.status, r.text).toBe(200);
    expect(r.body.ready).toBe(true);
    expect(r.body.datasets).toHaveLength(9);
    const grid = await s.status();
    expect(grid).toMatchObject({
      state: 'loaded',
      generation: 3,
      rows: 20,
      loaded_at: iso(loadedAt),
      last_check: iso(loadedAt),
      last_error: null,
      consecutive_failures: 0,
    });
    expect(grid['sha256']).toMatch(/^[0-9a-f]{64}$/);
    expect(typeof grid['load_ms']).toBe('number');
    // No polling configured (refreshIntervalMs 0): nothing is scheduled.
    expect(grid['next_check']).toBeNull();
    expect(await s.status('gbsi_eu/system_stress')).toMatchObject({ state: 'loaded', generation: 1, rows: 2, loaded_at: iso(T0), last_error: null });
    expect(await s.status('glmi/marginality')).toMatchObject({
      state: 'missing',
      generation: null,
      rows: null,
      loaded_at: null,
      last_error: 'no manifest.json at the source',
    });
  });

  it('after a fault it shows the reason, the failure count and the time of the failed check, and still the served generation', async () => {
    const loadedAt = clock.now();
    await world.proxy.setMode({ kind: 'refuse' });
    try {
      clock.advance(5000);
      const r = await s.refresh();
      const grid = entry(r.body, GRID_ID);
      expect(grid).toMatchObject({ outcome: 'unreachable', generation_before: 3, generation_after: 3 });
      expect(grid.error).toMatch(/ECONNREFUSED/);
      const st = await s.status();
      expect(st).toMatchObject({
        state: 'loaded',
        generation: 3,
        rows: 20,
        loaded_at: iso(loadedAt),
        last_check: iso(clock.now()),
        consecutive_failures: 1,
        last_error: grid.error,
      });
      // Without a key, /readyz says the state and what is served, never the reason (it names the endpoint).
      const ready = await s.get('/readyz', null);
      expect(ready.status).toBe(200);
      expect(entry(ready.body, GRID_ID)).toEqual({ dataset: GRID_ID, state: 'loaded', generation: 3, rows: 20 });
      expect(ready.text).not.toContain('ECONNREFUSED');
      expect(ready.text).not.toContain(String(grid.error).slice(0, 20));
      expect(rowsOf(await s.get(ALL_ROWS)).map((row) => row['value'])).toEqual(expectedValues(3));
    } finally {
      await world.proxy.setMode({ kind: 'pass' });
    }
    await publish(world.publisher, 4);
    expect(entry((await s.refresh()).body, GRID_ID)).toMatchObject({ outcome: 'loaded', generation_after: 4 });
    expect(await s.status()).toMatchObject({ generation: 4, last_error: null, consecutive_failures: 0, retained_generations: [1, 2, 3] });
    const body = (await request(s.url, '/admin/status', ADMIN_KEY)).body;
    expect(body.retention).toMatchObject({ budget_bytes: 2 ** 30, cursor_idle_ms: 600_000 });
    expect(body.retention.generations.map((e: { dataset: string; generation: number }) => `${e.dataset}#${e.generation}`)).toEqual([
      `${GRID_ID}#1`,
      `${GRID_ID}#2`,
      `${GRID_ID}#3`,
    ]);
    expect(body.retention.held_bytes).toBe(body.retention.generations.reduce((n: number, e: { bytes: number }) => n + e.bytes, 0));
  });
});
