/**
 * One memory budget for superseded generations across every dataset of the process
 * (issue 14, `--retain-memory`, `--cursor-idle`): least recently used released first, a
 * generation no cursor used for the idle time released even under budget, and every
 * release reaching the serving threads (`--workers 2`), whose cursor use counts as use.
 * A released generation's cursor answers 400 cursor_expired (contract 2). Idle generations
 * are swept whenever the process looks (a check of the source, a swap, /admin/status).
 */
import http from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { expectError, pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, startHarness, startInProcessHarness, type Harness, type Reply } from './support/harness.js';

const DATASETS = ['system_stress', 'balance_momentum', 'storage_surprise'] as const;
type Name = (typeof DATASETS)[number];
const ref = (dataset: Name) => ({ productId: 'gbsi_us', dataset });
const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);

function rows(g: number): PitRow[] {
  return ['2026-04-01', '2026-04-02', '2026-04-03'].flatMap((date) =>
    ['DE', 'FR'].map((country): PitRow => ({ key: { country }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `g${g}/${date}/${country}` })),
  );
}
const spec = (g: number) => pitSnapshot(['country'], rows(g));

async function publish(h: Harness, dataset: Name, g: number): Promise<void> {
  await writeGeneration(h.source, ref(dataset), buildArrowSnapshot(spec(g)), g, '2026-11-02T00:00:00Z');
  await h.server.loader.refreshNow();
}

const page = (dataset: Name) => `/gbsi_us/${dataset}?latest=false&limit=2`;

/** The next page of the chain `first` started. */
function next(h: Harness, dataset: Name, first: Reply): Promise<Reply> {
  expect(first.status, first.text).toBe(200);
  return h.get(`${page(dataset)}&cursor=${encodeURIComponent(first.body.next_cursor as string)}`);
}

async function status(h: Harness): Promise<{ retention: Record<string, unknown>; datasets: Array<Record<string, unknown>> }> {
  const r = await h.get('/admin/status', ADMIN_KEY);
  expect(r.status, r.text).toBe(200);
  return r.body;
}

const held = async (h: Harness): Promise<string[]> =>
  ((await status(h)).retention['generations'] as Array<{ dataset: string; generation: number }>).map((e) => `${e.dataset}#${e.generation}`).sort();

/** What one generation of these datasets weighs in memory (alike within a few bytes: their names differ). */
async function generationBytes(h: Harness): Promise<number> {
  const bytes = (await status(h)).datasets.flatMap((d) => (d['bytes'] === null ? [] : [d['bytes'] as number]));
  expect(bytes.length).toBeGreaterThan(0);
  return Math.max(...bytes);
}

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** A first server only to learn a generation's bytes, so that budgets can be set in generations. */
async function oneGenerationBytes(): Promise<number> {
  const probe = await startInProcessHarness({ datasets: DATASETS.map((d) => ({ ...ref(d), spec: spec(1) })) });
  try {
    return await generationBytes(probe);
  } finally {
    await probe.close();
  }
}

describe('one retention budget across datasets', () => {
  it('holds superseded generations of every dataset under one budget; the least recently used (by cursor use) goes first', async () => {
    const bytes = await oneGenerationBytes();
    h = await startInProcessHarness({
      datasets: DATASETS.map((d) => ({ ...ref(d), spec: spec(1) })),
      server: { retainMemory: { kind: 'bytes', bytes: Math.floor(bytes * 2.5) } },
    });
    const first = Object.fromEntries(await Promise.all(DATASETS.map(async (d) => [d, await h!.get(page(d))] as const))) as Record<Name, Reply>;
    await publish(h, 'system_stress', 2);
    await publish(h, 'balance_momentum', 2);
    expect(await held(h)).toEqual(['gbsi_us/balance_momentum#1', 'gbsi_us/system_stress#1']);
    // A cursor on system_stress#1 makes it the most recently used of the two...
    expect((await next(h, 'system_stress', first.system_stress)).status).toBe(200);
    // ...so the third superseded generation pushes out balance_momentum#1, not it.
    await publish(h, 'storage_surprise', 2);
    expect(await held(h)).toEqual(['gbsi_us/storage_surprise#1', 'gbsi_us/system_stress#1']);
    expectError(await next(h, 'balance_momentum', first.balance_momentum), 400, 'cursor_expired', 'cursor');
    const s1 = await next(h, 'system_stress', first.system_stress);
    expect(s1.status).toBe(200);
    expect(s1.body.metadata.generation).toBe(1);
    expect((await next(h, 'storage_surprise', first.storage_surprise)).body.metadata.generation).toBe(1);

    const s = await status(h);
    expect(s.retention).toMatchObject({ budget_bytes: Math.floor(bytes * 2.5), held_bytes: 2 * bytes, live_bytes: 3 * bytes, cursor_idle_seconds: 600 });
    expect(s.datasets.find((d) => d['dataset'] === 'gbsi_us/balance_momentum')).toMatchObject({ generation: 2, retained_generations: [] });
    expect(s.datasets.find((d) => d['dataset'] === 'gbsi_us/system_stress')).toMatchObject({ generation: 2, retained_generations: [1] });
    const metrics = (await h.get('/metrics', ADMIN_KEY)).text;
    expect(metrics).toContain(`pitcache_retention_budget_bytes ${Math.floor(bytes * 2.5)}`);
    expect(metrics).toContain(`pitcache_retained_bytes{dataset="gbsi_us/system_stress"} ${bytes}`);
    expect(metrics).toContain('pitcache_retained_generations{dataset="gbsi_us/storage_surprise"} 1');
    expect(metrics).not.toContain('pitcache_retained_generations{dataset="gbsi_us/balance_momentum"}');
  });

  it('releases a superseded generation no cursor used for --cursor-idle, counted from its last use', async () => {
    const clock = new ManualClock(T0);
    const timers = new ManualTimers(clock);
    h = await startInProcessHarness({ clock, datasets: [{ ...ref('system_stress'), spec: spec(1) }], server: { timers, cursorIdleMs: 60_000 } });
    const first = await h.get(page('system_stress'));
    await publish(h, 'system_stress', 2);
    expect(await held(h)).toEqual(['gbsi_us/system_stress#1']);
    timers.advance(30_000);
    const second = await next(h, 'system_stress', first); // used at +30 s
    expect(second.status).toBe(200);
    timers.advance(45_000); // +75 s: 45 s since its last use
    expect(await held(h)).toEqual(['gbsi_us/system_stress#1']);
    timers.advance(16_000); // +91 s: idle for 61 s, released at the next look: here a check of the source
    expect(h.server.registry.byName('gbsi_us/system_stress')!.retainedNumbers()).toEqual([1]);
    await h.server.loader.refreshNow();
    expect(h.server.registry.byName('gbsi_us/system_stress')!.retainedNumbers()).toEqual([]);
    expect(await held(h)).toEqual([]);
    expectError(await next(h, 'system_stress', second), 400, 'cursor_expired', 'cursor');
  });
});

/** GET over a fresh connection, so that the kernel may hand it to either serving thread. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function getFresh(url: string, path: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.get(`${url}${path}`, { agent: false, headers: { 'x-api-key': TEST_KEY } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
  });
}

describe('with serving threads (--workers 2)', () => {
  it('a release reaches every serving thread, and their cursor use keeps a generation from going idle', async () => {
    const bytes = await oneGenerationBytes();
    const clock = new ManualClock(T0);
    const timers = new ManualTimers(clock);
    h = await startHarness({
      clock,
      datasets: DATASETS.slice(0, 2).map((d) => ({ ...ref(d), spec: spec(1) })),
      server: { workers: 2, timers, cursorIdleMs: 60_000, retainMemory: { kind: 'bytes', bytes: Math.floor(bytes * 1.5) } },
    });
    const a = await h.get(page('system_stress'));
    const b = await h.get(page('balance_momentum'));
    const cursor = (r: Reply) => encodeURIComponent(r.body.next_cursor as string);
    await publish(h, 'system_stress', 2);
    await publish(h, 'balance_momentum', 2); // room for one: system_stress#1 (least recent) goes
    expect(await held(h)).toEqual(['gbsi_us/balance_momentum#1']);
    for (let i = 0; i < 8; i++) {
      const onA = await getFresh(h.url, `${page('system_stress')}&cursor=${cursor(a)}`);
      expect(onA.status, JSON.stringify(onA.body)).toBe(400);
      expect(onA.body.error.code).toBe('cursor_expired');
      const onB = await getFresh(h.url, `${page('balance_momentum')}&cursor=${cursor(b)}`);
      expect(onB.status).toBe(200);
      expect(onB.body.metadata.generation).toBe(1);
    }
    // Used on a serving thread at +50 s: the loading thread hears of it, so at +75 s it is not idle.
    timers.advance(50_000);
    expect((await getFresh(h.url, `${page('balance_momentum')}&cursor=${cursor(b)}`)).status).toBe(200);
    for (let i = 0; i < 100; i++) {
      const e = ((await status(h)).retention['generations'] as Array<{ last_used: string }>)[0];
      if (e?.last_used === new Date(T0 + 50_000).toISOString()) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    timers.advance(25_000);
    expect(await held(h)).toEqual(['gbsi_us/balance_momentum#1']);
    timers.advance(46_000); // +121 s: idle for 71 s, released at the next look, on every thread
    expect(await held(h)).toEqual([]);
    const after = await getFresh(h.url, `${page('balance_momentum')}&cursor=${cursor(b)}`);
    expect(after.status).toBe(400);
    expect(after.body.error.code).toBe('cursor_expired');
  }, 60_000);
});
