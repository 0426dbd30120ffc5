/**
 * Issue 14 item 3: one memory budget for superseded generations across all datasets
 * (--retain-memory), an idle bound (--cursor-idle) on the injected timers, releases that
 * reach every serving thread, and a released generation that still answers its cursors by
 * loading again from history/. /admin/status and /metrics show what is held and the budget.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, request, type Reply } from './support/harness.js';
import { T0, serve, type Served } from './support/s3-harness.js';

class CountingSource extends LocalSource {
  readonly objectReads = new Map<string, number>();
  override readObject(path: string): Promise<Uint8Array> {
    this.objectReads.set(path, (this.objectReads.get(path) ?? 0) + 1);
    return super.readObject(path);
  }
  // Loads stream their objects (hashed as they arrive).
  override readObjectStreaming(path: string, sizeHint: number | undefined, onBytes: (bytes: Uint8Array) => void): Promise<Uint8Array> {
    this.objectReads.set(path, (this.objectReads.get(path) ?? 0) + 1);
    return super.readObjectStreaming(path, sizeHint, onBytes);
  }
  reads(dataset: string, g: number): number {
    return this.objectReads.get(`gbsi_us/${dataset}/snapshots/0000000${g}.arrow`) ?? 0;
  }
}

/** Three datasets of one shape, so their generations weigh the same. */
const DATASETS = ['system_stress', 'balance_momentum', 'storage_surprise'] as const;
type Name = (typeof DATASETS)[number];

function rows(g: number): PitRow[] {
  return ['a', 'b', 'c', 'd'].flatMap((zone) =>
    ['2026-04-01', '2026-04-02', '2026-04-03'].map((date): PitRow => ({ key: { zone }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `g${g}`, value: g })),
  );
}
const page = (d: Name): string => `/gbsi_us/${d}?latest=false&limit=5`;

interface World {
  readonly dir: string;
  readonly source: CountingSource;
  readonly s: Served;
}
let world: World | null = null;
afterEach(async () => {
  await world?.s.close();
  if (world) await rm(world.dir, { recursive: true, force: true });
  world = null;
});

async function start(opts: Parameters<typeof serve>[1], names: readonly Name[] = DATASETS): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-retention-'));
  const source = new CountingSource(dir);
  for (const d of names) await publish(source, d, 1);
  world = { dir, source, s: await serve(source, opts) };
  return world;
}

async function publish(source: LocalSource, d: Name, g: number): Promise<void> {
  await writeGeneration(source, { productId: 'gbsi_us', dataset: d }, buildArrowSnapshot(pitSnapshot(['zone'], rows(g))), g, '2026-11-01T00:00:00Z');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function retention(s: Served): Promise<any> {
  const r = await request(s.url, '/admin/status', ADMIN_KEY);
  expect(r.status, r.text).toBe(200);
  return r.body.retention;
}
const held = async (s: Served): Promise<string[]> =>
  ((await retention(s)).generations as Array<{ dataset: string; generation: number }>).map((e) => `${e.dataset}#${e.generation}`).sort();

async function next(s: Served, d: Name, first: Reply): Promise<Reply> {
  const r = await s.get(`${page(d)}&cursor=${encodeURIComponent(first.body.next_cursor as string)}`);
  expect(r.status, r.text).toBe(200);
  return r;
}

/** Bytes of one generation of these datasets, as a server of `workers` serving threads counts them. */
async function generationBytes(workers = 1): Promise<number> {
  const w = await start({ clock: new ManualClock(T0), workers, ...(workers > 1 ? { build: 'worker' } : {}) }, ['system_stress']);
  const r = await request(w.s.url, '/admin/status', ADMIN_KEY);
  const bytes = (r.body.datasets as Array<{ dataset: string; bytes: number }>).find((d) => d.dataset === 'gbsi_us/system_stress')!.bytes;
  expect(bytes).toBeGreaterThan(0);
  await w.s.close();
  await rm(w.dir, { recursive: true, force: true });
  world = null;
  return bytes;
}

for (const workers of [1, 2]) {
  describe(`one budget across datasets (${workers} serving thread${workers === 1 ? '' : 's'})`, () => {
    it('three datasets superseded under a budget that fits two: the least recently used goes, on every thread, and its cursor reloads it', async () => {
      const bytes = await generationBytes(workers);
      const clock = new ManualClock(T0);
      const { s, source } = await start({
        clock,
        workers,
        retainMemory: { kind: 'bytes', bytes: Math.floor(bytes * 2.5) },
        ...(workers > 1 ? { build: 'worker' } : {}),
      });
      const firsts = new Map<Name, Reply>();
      for (const d of DATASETS) firsts.set(d, await s.get(page(d)));
      await publish(source, 'system_stress', 2);
      await publish(source, 'balance_momentum', 2);
      expect((await s.refresh()).status).toBe(200);
      expect(await held(s)).toEqual(['gbsi_us/balance_momentum#1', 'gbsi_us/system_stress#1']);
      // system_stress#1 is used again (later than balance_momentum#1 was retired).
      clock.set(T0 + 60_000);
      expect((await next(s, 'system_stress', firsts.get('system_stress')!)).body.metadata.generation).toBe(1);
      await expect
        .poll(
          async () =>
            ((await retention(s)).generations as Array<{ dataset: string; last_used: string }>).find((e) => e.dataset === 'gbsi_us/system_stress')?.last_used,
        )
        .toBe(new Date(T0 + 60_000).toISOString());
      await publish(source, 'storage_surprise', 2);
      await s.refresh();
      expect(await held(s)).toEqual(['gbsi_us/storage_surprise#1', 'gbsi_us/system_stress#1']);
      const r = await retention(s);
      expect(r).toMatchObject({ budget_bytes: Math.floor(bytes * 2.5), held_bytes: 2 * bytes, live_bytes: 3 * bytes, cursor_idle_ms: 600_000 });
      // The retained ones are answered from memory, on whichever thread, and count as used.
      const lastUsed = async (d: Name): Promise<string | undefined> =>
        ((await retention(s)).generations as Array<{ dataset: string; last_used: string }>).find((e) => e.dataset === `gbsi_us/${d}`)?.last_used;
      clock.set(T0 + 120_000);
      const kept = source.reads('system_stress', 1);
      for (let i = 0; i < 6; i++) await next(s, 'system_stress', firsts.get('system_stress')!);
      expect(source.reads('system_stress', 1)).toBe(kept);
      await expect.poll(() => lastUsed('system_stress')).toBe(new Date(T0 + 120_000).toISOString());
      // The released one is gone from every thread: its chain loads it again from history/ (once, for every thread)...
      const before = source.reads('balance_momentum', 1);
      for (let i = 0; i < 4; i++) {
        expect((await next(s, 'balance_momentum', firsts.get('balance_momentum')!)).body.data.map((x: { tag: string }) => x.tag)).toEqual(Array(5).fill('g1'));
      }
      expect(source.reads('balance_momentum', 1)).toBe(before + 1);
      // ...and joins the budget as the most recent: storage_surprise#1 (least recently used) goes.
      expect(await held(s)).toEqual(['gbsi_us/balance_momentum#1', 'gbsi_us/system_stress#1']);
    }, 60_000);
  });
}

/** One generation of these datasets: 4 zones x 3 dates, one key each. */
const KEYS = 12;
const DAYS = 3;
/** What one serving thread's bulk indexes of it take once built: the date order (4 bytes a key, a day's start, 16 bytes a block of 128 keys) and the suffix minimum (8 bytes a key). */
const INDEX_BYTES_PER_THREAD = KEYS * 4 + (DAYS + 1) * 4 + Math.ceil(KEYS / 128) * 16 + KEYS * 8;

for (const workers of [1, 2]) {
  describe(`the bulk indexes count in a generation's bytes (${workers} serving thread${workers === 1 ? '' : 's'})`, () => {
    const opts = (bytes: number) => ({
      clock: new ManualClock(T0),
      workers,
      retainMemory: { kind: 'bytes', bytes } as const,
      ...(workers > 1 ? { build: 'worker' as const } : {}),
    });

    it('/admin/status and /metrics show them, once per serving thread, before any bulk answer built them', async () => {
      const { s } = await start(opts(2 ** 30), ['system_stress']);
      const ds = await s.status('gbsi_us/system_stress');
      expect(ds['index_bytes']).toBe(workers * INDEX_BYTES_PER_THREAD);
      expect(ds['table_bytes']).toBeGreaterThan(0);
      expect(ds['bytes']).toBe(ds['table_bytes'] + ds['index_bytes']);
      // Built by an answer over every series: the same count (it was counted as built).
      expect((await s.get('/gbsi_us/system_stress?latest=false&limit=5')).status).toBe(200);
      expect(await s.status('gbsi_us/system_stress')).toMatchObject({ bytes: ds['bytes'], index_bytes: ds['index_bytes'] });
      const text = (await request(s.url, '/metrics', ADMIN_KEY)).text;
      const value = (name: string): number => Number(new RegExp(`^${name}\\{dataset="gbsi_us/system_stress"\\} (\\S+)$`, 'm').exec(text)?.[1]);
      expect(value('pitcache_dataset_index_bytes')).toBe(ds['index_bytes']);
      expect(value('pitcache_dataset_bytes')).toBe(ds['bytes']);
    });

    it('--retain-memory holds a superseded generation to its table and its indexes: one byte short of both, it is released', async () => {
      const bytes = await generationBytes(workers);
      for (const [budget, kept] of [
        [bytes, ['gbsi_us/system_stress#1']],
        [bytes - 1, []],
      ] as const) {
        const { s, source } = await start(opts(budget), ['system_stress']);
        const table = (await s.status('gbsi_us/system_stress'))['table_bytes'] as number;
        expect(budget).toBeGreaterThan(table);
        await publish(source, 'system_stress', 2);
        expect((await s.refresh()).status).toBe(200);
        expect(await held(s)).toEqual(kept);
        expect((await retention(s)).held_bytes).toBe(kept.length * bytes);
        await s.close();
        await rm(world!.dir, { recursive: true, force: true });
        world = null;
      }
    }, 120_000);
  });
}

describe('cursor idle', () => {
  it('a superseded generation no request used for --cursor-idle is released on the timers; its cursor still answers by reloading', async () => {
    const clock = new ManualClock(T0);
    const timers = new ManualTimers(clock);
    const { s, source } = await start({ clock, timers, cursorIdleMs: 60_000, retainMemory: { kind: 'percent', percent: 1000 } }, ['system_stress']);
    const first = await s.get(page('system_stress'));
    await publish(source, 'system_stress', 2);
    await s.refresh();
    expect(await held(s)).toEqual(['gbsi_us/system_stress#1']);
    timers.advance(30_000);
    await next(s, 'system_stress', first);
    // Due at 60 s after the retirement, but used at 30 s: still held at 70 s.
    timers.advance(40_000);
    expect(await held(s)).toEqual(['gbsi_us/system_stress#1']);
    timers.advance(20_000);
    expect(await held(s)).toEqual([]);
    expect(timers.size).toBe(0);
    const reads = source.reads('system_stress', 1);
    expect((await next(s, 'system_stress', first)).body.metadata.generation).toBe(1);
    expect(source.reads('system_stress', 1)).toBe(reads + 1);
  });
});

describe('/metrics', () => {
  it('exposes retained generations, their bytes and the budget; promtool accepts it', async () => {
    const { s, source } = await start({ clock: new ManualClock(T0), retainMemory: { kind: 'bytes', bytes: 10 * 2 ** 20 } }, ['system_stress']);
    await publish(source, 'system_stress', 2);
    await s.refresh();
    const r = await retention(s);
    const text = (await request(s.url, '/metrics', ADMIN_KEY)).text;
    const value = (name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
    expect(value('pitcache_retained_generations')).toBe(1);
    expect(value('pitcache_retained_bytes')).toBe(r.held_bytes);
    expect(value('pitcache_retained_bytes')).toBeGreaterThan(0);
    expect(value('pitcache_retained_budget_bytes')).toBe(10 * 2 ** 20);
    expect(execFileSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] })).toBe('');
  });
});

describe('the default budget (25% of the live bytes, never below the largest live generation)', () => {
  it('a server of one dataset keeps the generation its cursor chains started on across a refresh, from memory', async () => {
    const { s, source } = await start({ clock: new ManualClock(T0) }, ['system_stress']);
    const first = await s.get(page('system_stress'));
    await publish(source, 'system_stress', 2);
    expect((await s.refresh()).status).toBe(200);
    const r = await retention(s);
    // 25% of one generation could never hold the superseded one (the same size): the floor can.
    expect(r.live_bytes).toBeGreaterThan(0);
    expect(r.budget_bytes).toBe(r.live_bytes);
    expect(await held(s)).toEqual(['gbsi_us/system_stress#1']);
    const reads = source.reads('system_stress', 1);
    expect((await next(s, 'system_stress', first)).body.metadata.generation).toBe(1);
    expect(source.reads('system_stress', 1)).toBe(reads);
  });
});
