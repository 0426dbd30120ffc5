/**
 * Several datasets load at once: after reading every manifest, the loader fetches and
 * builds as many snapshots together as the builder runs (real worker threads here), the
 * largest first. Each dataset must still end up with its own table, a refused snapshot must
 * not replace a good one nor hold the others back, and reports keep the registry's order.
 * The local cache, filled from bytes that went through a build worker, must hold them whole.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { silentLogger } from '../src/log/logger.js';
import { DatasetRegistry } from '../src/generations/dataset-registry.js';
import { SnapshotLoader } from '../src/generations/snapshot-loader.js';
import { WorkerTableBuilder, type GenerationBuild, type TableBuilder } from '../src/generations/table-builder.js';
import { realTimers } from '../src/time/timers.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { parseManifest, partsOf } from '../src/snapshot/manifest.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import type { SnapshotExpectations } from '../src/store/snapshot-to-table.js';
import type { Table } from '../src/store/table.js';
import { systemClock } from '../src/time/clock.js';
import { pitSnapshot, tagsOf, type PitRow } from './support/fixtures.js';
import { startHarness } from './support/harness.js';

interface Spec {
  readonly productId: string;
  readonly dataset: string;
  readonly key: readonly string[];
  readonly series: number;
  readonly days: number;
}

/** Sizes differ so that "largest first" has an order to follow; wssi_us is the largest. */
const DATASETS: readonly Spec[] = [
  { productId: 'gbsi_us', dataset: 'system_stress', key: [], series: 1, days: 30 },
  { productId: 'pemi', dataset: 'grid_stress', key: ['bidding_zone'], series: 12, days: 300 },
  { productId: 'glmi', dataset: 'marginality', key: ['basin'], series: 3, days: 100 },
  { productId: 'wrsi', dataset: 'forecast_stress', key: ['geography', 'region_type'], series: 6, days: 200 },
  { productId: 'wssi_us', dataset: 'demand_shock', key: ['region_id', 'region_type'], series: 20, days: 400 },
];
const REFUSED = { productId: 'gbsi_eu', dataset: 'system_stress' } as const;
const idOf = (d: { productId: string; dataset: string }): string => `${d.productId}/${d.dataset}`;

/** Rows tagged with their dataset and generation: a table built for another dataset cannot pass. */
function rowsOf(d: Spec, generation: number): PitRow[] {
  const rows: PitRow[] = [];
  for (let s = 0; s < d.series; s++) {
    for (let day = 0; day < d.days; day++) {
      const date = new Date(Date.UTC(2025, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);
      const key = Object.fromEntries(d.key.map((k) => [k, `${k}-${s}`]));
      rows.push({ date, eff: date, obs: `${date}T06:00:00Z`, key, tag: `${idOf(d)}#g${generation}`, value: s * 1000 + day });
    }
  }
  return rows;
}

async function publishAll(source: LocalSource, generation: number, which: readonly Spec[]): Promise<void> {
  for (const d of which)
    await writeGeneration(source, d, buildArrowSnapshot(pitSnapshot(d.key, rowsOf(d, generation), { batchRows: 500 })), generation, '2026-11-01T00:00:00Z');
}

/** A manifest whose object does not match its sha256. */
async function publishBroken(source: LocalSource, dir: string, ref: { productId: string; dataset: string }, generation: number): Promise<void> {
  const spec: Spec = { ...ref, key: ['country'], series: 2, days: 10 };
  const m = await writeGeneration(source, ref, buildArrowSnapshot(pitSnapshot(spec.key, rowsOf(spec, generation))), generation, '2026-11-01T00:00:00Z');
  const path = join(dir, ref.productId, ref.dataset, m.object);
  const bytes = await readFile(path);
  bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 0xff;
  await writeFile(path, bytes);
}

/** Real worker builds, watched: how many at once, and in which order they were asked for. */
class WatchedBuilder implements TableBuilder {
  inFlight = 0;
  maxInFlight = 0;
  readonly asked: number[] = [];
  constructor(private readonly inner: TableBuilder) {}
  get parallelism(): number {
    return this.inner.parallelism;
  }
  async open(want: SnapshotExpectations): Promise<GenerationBuild> {
    this.asked.push(want.parts.reduce((n, p) => n + p.rows, 0));
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    let open = true;
    const ended = (): void => {
      if (open) this.inFlight--;
      open = false;
    };
    try {
      const build = await this.inner.open(want);
      return {
        add: (bytes, verified) => build.add(bytes, verified),
        finish: () => build.finish().finally(ended),
        abort: () => {
          ended();
          build.abort();
        },
      };
    } catch (e) {
      ended();
      throw e;
    }
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The tags a table holds (its `tag` column's distinct values). */
function tagsIn(table: Table): string[] {
  const c = table.columns.find((x) => x.name === 'tag')!;
  if (c.kind !== 'string') throw new Error('tag is a string column');
  return [...c.dict.values];
}

describe('loading several datasets at once', () => {
  let dir: string;
  let source: LocalSource;
  let builder: WatchedBuilder;
  let registry: DatasetRegistry;
  let loader: SnapshotLoader;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-parallel-'));
    source = new LocalSource(dir);
    await publishAll(source, 1, DATASETS);
    await publishBroken(source, dir, REFUSED, 1);
    builder = new WatchedBuilder(new WorkerTableBuilder(2));
    registry = new DatasetRegistry();
    loader = new SnapshotLoader({
      source,
      registry,
      builder,
      clock: systemClock,
      timers: realTimers,
      log: silentLogger,
      refreshIntervalMs: 0,
      startupTimeoutMs: 1000,
      cache: null,
    });
  });
  afterAll(async () => {
    loader?.stop();
    await builder?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('start-up builds two at a time, the largest first; each dataset gets its own table; the refused one stays unloaded', async () => {
    await loader.start();
    expect(registry.ready).toBe(true);
    expect(builder.maxInFlight).toBe(2);
    const sizes = DATASETS.map((d) => d.series * d.days);
    expect(builder.asked.slice(0, 2).sort((a, b) => b - a)).toEqual([...sizes].sort((a, b) => b - a).slice(0, 2));
    for (const d of DATASETS) {
      const slot = registry.get(d.productId, d.dataset)!;
      expect(slot.state, idOf(d)).toBe('loaded');
      expect(slot.current!.table.rows).toBe(d.series * d.days);
      expect(slot.current!.table.seriesCount).toBe(d.series);
      expect(tagsIn(slot.current!.table)).toEqual([`${idOf(d)}#g1`]);
    }
    const refused = registry.get(REFUSED.productId, REFUSED.dataset)!;
    expect(refused.state).toBe('refused');
    expect(refused.lastError).toMatch(/sha256 mismatch/);
    expect(registry.get('glmi', 'marginality')!.current!.number).toBe(1);
  });

  it('a refresh loads the new generations at once, keeps the last good one where the new one is refused, and reports in registry order', async () => {
    const [, pemi, glmi, , wssi] = DATASETS;
    await publishAll(source, 2, [pemi!, wssi!]);
    await publishBroken(source, dir, glmi!, 2);
    const reports = await loader.refreshNow();
    expect(reports.map((r) => r.dataset)).toEqual(registry.slots.map((s) => s.id));
    const outcome = (d: { productId: string; dataset: string }) => reports.find((r) => r.dataset === idOf(d))!;
    expect(outcome(pemi!)).toMatchObject({ outcome: 'loaded', generationBefore: 1, generationAfter: 2, error: null });
    expect(outcome(wssi!)).toMatchObject({ outcome: 'loaded', generationBefore: 1, generationAfter: 2, error: null });
    expect(outcome(glmi!)).toMatchObject({ outcome: 'refused', generationBefore: 1, generationAfter: 1 });
    expect(outcome(glmi!).error).toMatch(/sha256 mismatch/);
    expect(outcome(DATASETS[0]!)).toMatchObject({ outcome: 'unchanged', generationAfter: 1 });
    expect(tagsIn(registry.get('pemi', 'grid_stress')!.current!.table)).toEqual(['pemi/grid_stress#g2']);
    expect(tagsIn(registry.get('wssi_us', 'demand_shock')!.current!.table)).toEqual(['wssi_us/demand_shock#g2']);
    const kept = registry.get('glmi', 'marginality')!;
    expect(kept).toMatchObject({ state: 'loaded' });
    expect(kept.current!.number).toBe(1);
    expect(tagsIn(kept.current!.table)).toEqual(['glmi/marginality#g1']);
  });
});

describe('a server on worker builds, with a local cache', () => {
  it('answers each dataset from its own snapshot, and caches the verified bytes whole', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'pitcache-parallel-cache-'));
    const h = await startHarness({
      datasets: DATASETS.map((d) => ({ productId: d.productId, dataset: d.dataset, spec: pitSnapshot(d.key, rowsOf(d, 1), { batchRows: 500 }) })),
      server: { build: 'worker', cacheDir },
    });
    try {
      for (const d of DATASETS) {
        const tags = tagsOf(await h.get(`/${d.productId}/${d.dataset}?latest=false&limit=10000`));
        expect(tags.length, idOf(d)).toBe(Math.min(10_000, d.series * d.days));
        expect(new Set(tags)).toEqual(new Set([`${idOf(d)}#g1`]));
        const manifest = parseManifest(await readFile(join(cacheDir, d.productId, d.dataset, 'manifest.json')));
        const [part] = partsOf(manifest);
        const cached = await readFile(join(cacheDir, d.productId, d.dataset, part!.object));
        expect(createHash('sha256').update(cached).digest('hex'), idOf(d)).toBe(part!.sha256);
      }
    } finally {
      await h.close();
      await rm(cacheDir, { recursive: true, force: true });
    }
  });
});
