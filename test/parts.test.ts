/**
 * Generations of many parts (contract 14). A differential test: random snapshots split into
 * parts at random series boundaries answer exactly as the same rows in one object, on every
 * data endpoint and in every format, page by page. Then every broken rule of contract 14 is
 * refused whole while the generation in force stays: a series across two parts, parts out of
 * series order, a part whose bytes, row count or schema do not match, a missing part.
 */
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import type { SnapshotSource } from '../src/source/snapshot-source.js';
import { DatasetSelection } from '../src/catalog/dataset-selection.js';
import { prune } from '../src/publish/prune.js';
import { buildArrowSnapshot, type ColumnSpec, type SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { manifestPath, partsOf, type PartsManifest } from '../src/snapshot/manifest.js';
import { readManifest } from '../src/snapshot/read-manifest.js';
import { partObjectName, writePartsGeneration } from '../src/snapshot/write-generation.js';
import { ADMIN_KEY, startHarness, type Harness, type Reply } from './support/harness.js';
import { Rng, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';
import { isoDate, randomAsOf, randomFilters } from './support/random-query.js';
import { pickRows, randomCuts, rowsByCuts, seriesOfRows, splitSpec } from './support/split-parts.js';

const SEED = Number(process.env.PITCACHE_PARTS_SEED ?? 20_261_129);
const QUERIES = Number(process.env.PITCACHE_PARTS_QUERIES ?? 25);
const CREATED = '2026-11-01T00:00:00Z';

const TARGETS = [
  { productId: 'gbsi_us', dataset: 'storage_surprise', manySeries: true },
  { productId: 'gbsi_eu', dataset: 'system_stress', manySeries: false },
  { productId: 'pemi', dataset: 'grid_stress', manySeries: true },
  { productId: 'wrsi', dataset: 'forecast_stress', manySeries: false },
  { productId: 'wssi_us', dataset: 'demand_shock', manySeries: true },
] as const;

const snaps = TARGETS.map((t, i) => generateSnapshot((SEED + i * 7919) >>> 0, t.productId, t.dataset, { manySeries: t.manySeries }));

describe(`a generation of many parts answers as one object (seed ${SEED})`, () => {
  let whole: Harness;
  let parted: Harness;
  const partCounts = new Map<string, number>();

  beforeAll(async () => {
    whole = await startHarness({ datasets: snaps.map((s) => ({ productId: s.productId, dataset: s.dataset, spec: s.spec })) });
    parted = await startHarness({
      datasets: [],
      // Real worker builds: the parts travel to a build thread and back as a list.
      server: { build: 'worker' },
      prepare: async (dir) => {
        const source = new LocalSource(dir);
        for (const s of snaps) {
          const rng = new Rng(s.seed ^ 0x2545f491);
          const parts = splitSpec(s.spec, randomCuts(rng, seriesOfRows(s.spec).count, 5));
          partCounts.set(`${s.productId}/${s.dataset}`, parts.length);
          // Some parts in the stream format: every part is a file or a stream (contract 14).
          const bytes = parts.map((p, i) => buildArrowSnapshot(p, (i + s.seed) % 3 === 0 ? 'stream' : 'file'));
          await writePartsGeneration(source, s, bytes, 1, CREATED);
        }
      },
    });
    const status = await parted.get('/admin/status', ADMIN_KEY);
    const refused = (status.body?.datasets ?? []).filter((d: { last_error: unknown; state: string }) => d.last_error !== null && d.state !== 'missing');
    expect(refused, JSON.stringify(refused)).toEqual([]);
  }, 120_000);
  afterAll(async () => {
    await whole?.close();
    await parted?.close();
  });

  it('every dataset is split into more than one part', () => {
    for (const s of snaps) expect(partCounts.get(`${s.productId}/${s.dataset}`), `${s.productId}/${s.dataset}`).toBeGreaterThan(1);
  });

  for (const snap of snaps) {
    it(`${snap.productId}/${snap.dataset} (${snap.rows.length} rows, key [${snap.seriesKey.join(',')}])`, async () => {
      const rng = new Rng(snap.seed ^ 0x9e3779b9);
      let compared = 0;
      let nonEmpty = 0;
      for (let i = 0; i < QUERIES; i++) {
        const path = randomPath(rng, snap);
        for (const format of ['json', 'csv', 'arrow'] as const) {
          const pages = await comparePages(whole, parted, `${path}&format=${format}`, format);
          compared += pages.compared;
          nonEmpty += pages.rows > 0 ? 1 : 0;
        }
      }
      expect(compared).toBeGreaterThanOrEqual(QUERIES * 3);
      expect(nonEmpty, 'some answers hold rows').toBeGreaterThan(QUERIES / 2);
    }, 120_000);
  }

  it('/admin/status: the same rows, series and keys', async () => {
    const a = (await whole.get('/admin/status', ADMIN_KEY)).body.datasets as Array<Record<string, unknown>>;
    const b = (await parted.get('/admin/status', ADMIN_KEY)).body.datasets as Array<Record<string, unknown>>;
    for (const s of snaps) {
      const id = `${s.productId}/${s.dataset}`;
      const pick = (d: Record<string, unknown> | undefined): unknown[] => [d?.['generation'], d?.['rows'], d?.['keys'], d?.['series'], d?.['state']];
      expect(pick(b.find((d) => d['dataset'] === id)), id).toEqual(pick(a.find((d) => d['dataset'] === id)));
    }
  });
});

/** A random query on one of the three data endpoints (without format). */
function randomPath(rng: Rng, snap: GeneratedSnapshot): string {
  const base = `/${snap.productId}/${snap.dataset}`;
  const q = new URLSearchParams(randomFilters(rng, snap));
  const day = (): string => isoDate(rng.int(snap.firstDay - 2, snap.lastDay + 2));
  const kind = rng.int(0, 4);
  if (kind <= 1) {
    if (rng.chance(0.5)) q.set('latest', rng.pick(['true', 'false']));
    if (rng.chance(0.5)) q.set('date_from', isoDate(rng.int(snap.firstDay - 2, snap.firstDay + 20)));
    if (rng.chance(0.5)) q.set('date_to', day());
    if (rng.chance(0.6)) q.set('as_of', randomAsOf(rng, snap));
    q.set('limit', String(rng.pick([1, 7, 50, 200, 10_000])));
    return `${base}?${q}`;
  }
  if (kind === 2) {
    const from = rng.int(snap.firstDay, snap.lastDay);
    q.set('decision_from', isoDate(from));
    q.set('decision_to', isoDate(Math.min(snap.lastDay + 3, from + rng.int(0, 40))));
    q.set('step', String(rng.pick([1, 3, 7])));
    q.set('window', String(rng.pick([0, 5, 30, 90])));
    q.set('limit', String(rng.pick([5, 100, 10_000])));
    return `${base}/walk_forward?${q}`;
  }
  const from = rng.int(snap.firstDay - 2, snap.lastDay);
  q.set('date_from', isoDate(from));
  q.set('date_to', isoDate(from + rng.int(0, 30)));
  if (rng.chance(0.5)) q.set('as_of', randomAsOf(rng, snap));
  if (rng.chance(0.3)) q.set('release', 'first');
  q.set('limit', String(rng.pick([3, 100, 10_000])));
  return `${base}/vintages?${q}`;
}

/** What may differ between two servers answering the same page: the request's own id. */
function normalized(r: Reply): string {
  return r.text.replace(/req_[0-9a-z]{16,}/g, 'req_');
}

/** Compares the first page (and, in JSON, up to 4 more along the cursor chain) of both servers. */
async function comparePages(a: Harness, b: Harness, path: string, format: string): Promise<{ compared: number; rows: number }> {
  let compared = 0;
  let rows = 0;
  let next: string | null = path;
  for (let page = 0; next !== null && page < 5; page++) {
    const [ra, rb]: [Reply, Reply] = await Promise.all([a.get(next), b.get(next)]);
    const at = `GET ${next}`;
    expect(rb.status, at).toBe(ra.status);
    expect(rb.headers.get('content-type'), at).toBe(ra.headers.get('content-type'));
    expect(normalized(rb), at).toBe(normalized(ra));
    compared++;
    if (ra.status !== 200 || format !== 'json') break;
    rows += (ra.body.count as number) ?? 0;
    next = ra.body.has_more === true ? `${path}&cursor=${encodeURIComponent(ra.body.next_cursor as string)}` : null;
  }
  if (format !== 'json') rows = 1;
  return { compared, rows };
}

describe('a generation that breaks contract 14 is refused whole; the one in force stays', () => {
  const snap = snaps[2]!; // pemi/grid_stress: many series, a two-column key
  const ref = { productId: snap.productId, dataset: snap.dataset };
  const id = `${snap.productId}/${snap.dataset}`;
  let h: Harness;
  let source: LocalSource;
  let served: string;
  /** every row the dataset serves, as JSON (the envelope names the generation: left out) */
  const rowsServed = async (): Promise<string> => JSON.stringify((await h.get(`/${id}?latest=false&limit=10000`)).body.data);
  let next = 2;
  let inForce = 1;
  const { series, count } = seriesOfRows(snap.spec);
  const cuts = [Math.floor(count / 3), Math.floor((2 * count) / 3)];
  const goodParts = (): SnapshotSpec[] => rowsByCuts(series, cuts).map((rows) => pickRows(snap.spec, rows));

  beforeAll(async () => {
    h = await startHarness({ datasets: [{ ...ref, spec: snap.spec }], server: { build: 'worker' } });
    source = h.source;
    served = await rowsServed();
  }, 60_000);
  afterAll(async () => {
    await h?.close();
  });

  /** Publishes `parts` as the next generation (then `tweak` rewrites files), refreshes, expects a refusal. */
  async function refused(parts: readonly SnapshotSpec[], reason: RegExp, tweak?: (m: PartsManifest, dir: string) => Promise<void>): Promise<void> {
    const g = next++;
    const m = await writePartsGeneration(
      source,
      ref,
      parts.map((p) => buildArrowSnapshot(p)),
      g,
      CREATED,
    );
    await tweak?.(m, join(h.dir, snap.productId, snap.dataset));
    const r = await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
    expect(r.status, r.text).toBe(200);
    const report = (r.body.datasets as Array<Record<string, unknown>>).find((d) => d['dataset'] === id)!;
    expect(report).toMatchObject({ outcome: 'refused', generation_before: inForce, generation_after: inForce });
    expect(report['error']).toMatch(reason);
    const status = ((await h.get('/admin/status', ADMIN_KEY)).body.datasets as Array<Record<string, unknown>>).find((d) => d['dataset'] === id)!;
    expect(status).toMatchObject({ state: 'loaded', generation: inForce, last_error: report['error'] });
    expect(await rowsServed()).toBe(served);
  }

  it('the good parts load (so each refusal below is for its one broken rule)', async () => {
    const g = next++;
    await writePartsGeneration(
      source,
      ref,
      goodParts().map((p) => buildArrowSnapshot(p)),
      g,
      CREATED,
    );
    const r = await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
    expect((r.body.datasets as Array<Record<string, unknown>>).find((d) => d['dataset'] === id)).toMatchObject({ outcome: 'loaded', generation_after: g });
    inForce = g;
    expect(await rowsServed()).toBe(served);
  });

  it('a series across two parts', async () => {
    // The first series of part 1 moves one of its rows to part 0.
    const byPart = rowsByCuts(series, cuts);
    const moved = byPart[1]!.shift()!;
    byPart[0]!.push(moved);
    await refused(
      byPart.map((rows) => pickRows(snap.spec, rows)),
      /lies in two parts, snapshots\/\d{8}\/00000\.arrow and snapshots\/\d{8}\/00001\.arrow/,
    );
  });

  it('parts out of series order', async () => {
    const [a, b, c] = goodParts();
    await refused([a!, c!, b!], /parts out of series order/);
  });

  it('a part whose bytes do not match its sha256', async () => {
    await refused(goodParts(), /sha256 mismatch for snapshots\/\d{8}\/00001\.arrow/, async (m, dir) => {
      const path = join(dir, m.parts[1]!.object);
      const bytes = await readFile(path);
      bytes[bytes.length >> 1] = bytes[bytes.length >> 1]! ^ 0xff;
      await writeFile(path, bytes);
    });
  });

  it('a part holding another row count than its manifest says', async () => {
    await refused(goodParts(), /manifest says \d+ rows, snapshots\/\d{8}\/00002\.arrow holds \d+/, async (m) => {
      const parts = m.parts.map((p, i) => (i === 2 ? { ...p, rows: p.rows + 1 } : p));
      await source.writeObject(manifestPath(ref.productId, ref.dataset), Buffer.from(JSON.stringify({ ...m, parts, rows: m.rows + 1 })));
    });
  });

  it('a part with another schema', async () => {
    const parts = goodParts();
    const value = parts[1]!.columns.find((c) => c.type === 'float64');
    expect(value, 'the snapshot has a float64 column').toBeDefined();
    parts[1] = {
      ...parts[1]!,
      columns: parts[1]!.columns.map((c): ColumnSpec => (c === value ? { name: c.name, type: 'float32', values: c.values as ArrayLike<number | null> } : c)),
    };
    await refused(parts, /snapshots\/\d{8}\/00001\.arrow has another schema than snapshots\/\d{8}\/00000\.arrow/);
  });

  it('a missing part', async () => {
    const { unlink } = await import('node:fs/promises');
    const g = next++;
    const m = await writePartsGeneration(
      source,
      ref,
      goodParts().map((p) => buildArrowSnapshot(p)),
      g,
      CREATED,
    );
    await unlink(join(h.dir, snap.productId, snap.dataset, m.parts[2]!.object));
    const r = await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
    const report = (r.body.datasets as Array<Record<string, unknown>>).find((d) => d['dataset'] === id)!;
    expect(report).toMatchObject({ generation_before: inForce, generation_after: inForce });
    expect(report['error']).toMatch(/00002\.arrow is missing/);
  });

  it("a manifest whose rows are not its parts' sum", async () => {
    await refused(goodParts(), /manifest\.json is invalid at rows: rows is \d+, the parts hold \d+/, async (m) => {
      await source.writeObject(manifestPath(ref.productId, ref.dataset), Buffer.from(JSON.stringify({ ...m, rows: m.rows + 5 })));
    });
  });
});

describe('parts in history/, pitcache prune and --cache-dir', () => {
  const snap = snaps[3]!; // wrsi/forecast_stress
  const ref = { productId: snap.productId, dataset: snap.dataset };
  const id = `${snap.productId}/${snap.dataset}`;
  const { count } = seriesOfRows(snap.spec);
  /** generation g: g + 1 parts (at most one per series) */
  const partsOfGeneration = (g: number): Uint8Array[] =>
    splitSpec(
      snap.spec,
      Array.from({ length: Math.min(g, count - 1) }, (_, i) => Math.floor(((i + 1) * count) / (g + 1))),
    ).map((p) => buildArrowSnapshot(p));
  let dir: string;
  let source: LocalSource;
  let whole: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-parts-'));
    source = new LocalSource(dir);
    for (let g = 1; g <= 3; g++) await writePartsGeneration(source, ref, partsOfGeneration(g), g, `2026-11-0${g}T00:00:00Z`);
    const h = await startHarness({ datasets: [{ ...ref, spec: snap.spec }] });
    whole = JSON.stringify((await h.get(`/${id}?latest=false&limit=10000`)).body.data);
    await h.close();
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generation=N loads a generation of many parts from history/', async () => {
    const h = await startHarness({ datasets: [], prepare: (to) => cp(dir, to, { recursive: true }) });
    try {
      for (const g of [1, 2, 3]) {
        const r = await h.get(`/${id}?latest=false&limit=10000&generation=${g}`);
        expect(r.status, r.text).toBe(200);
        expect(r.body.metadata.generation).toBe(g);
        expect(JSON.stringify(r.body.data), `generation ${g}`).toBe(whole);
      }
    } finally {
      await h.close();
    }
  });

  it('prune removes old generations with every part, and keeps the live one whole', async () => {
    const copy = await mkdtemp(join(tmpdir(), 'pitcache-parts-prune-'));
    try {
      await cp(dir, copy, { recursive: true });
      const pruned = new LocalSource(copy);
      const [done] = await prune({
        source: pruned,
        datasets: DatasetSelection.all(),
        keep: 2,
        olderThanMs: null,
        nowMs: Date.UTC(2026, 10, 10),
        dryRun: false,
      });
      expect(done!.generations).toEqual([1]);
      const left = (await pruned.listObjects(`${id}/`)).map((o) => o.path.slice(id.length + 1)).sort();
      const live = (await readManifest(pruned, ref, null)) as { status: 'ok'; manifest: PartsManifest };
      const kept = [...partsOf(live.manifest).map((p) => p.object), ...partsOfGeneration(2).map((_, i) => partObjectName(2, i))];
      expect(left).toEqual(['history/00000002.json', 'history/00000003.json', 'manifest.json', ...kept].sort());
    } finally {
      await rm(copy, { recursive: true, force: true });
    }
  });

  it('--cache-dir keeps the verified parts, and serves them while the source is down', async () => {
    const cacheDir = await mkdtemp(join(tmpdir(), 'pitcache-parts-cache-'));
    try {
      const first = await startHarness({ datasets: [], prepare: (to) => cp(dir, to, { recursive: true }), server: { cacheDir } });
      expect((await first.get(`/${id}?limit=1`)).body.metadata.generation).toBe(3);
      await first.close();
      const cached = join(cacheDir, snap.productId, snap.dataset);
      expect(await readdir(join(cached, 'snapshots'))).toEqual(['00000003']);
      expect(await readdir(join(cached, 'snapshots', '00000003'))).toEqual(['00000.arrow', '00001.arrow', '00002.arrow', '00003.arrow']);
      const down: SnapshotSource = {
        description: 'down',
        listDatasets: () => Promise.reject(new Error('ECONNREFUSED')),
        readIfChanged: () => Promise.reject(new Error('ECONNREFUSED')),
        readObject: () => Promise.reject(new Error('ECONNREFUSED')),
        writeObject: () => Promise.reject(new Error('ECONNREFUSED')),
      };
      const second = await startHarness({ datasets: [], server: { cacheDir, source: down, startupTimeoutMs: 0 } });
      try {
        const r = await second.get(`/${id}?latest=false&limit=10000`);
        expect(r.status, r.text).toBe(200);
        expect(r.body.metadata.generation).toBe(3);
        expect(JSON.stringify(r.body.data)).toBe(whole);
      } finally {
        await second.close();
      }
    } finally {
      await rm(cacheDir, { recursive: true, force: true });
    }
  });
});
