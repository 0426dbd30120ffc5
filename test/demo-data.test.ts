import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { DataType, TimeUnit, tableFromIPC } from 'apache-arrow';
import type { Table, Vector } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_ADMIN_KEY, DEMO_DATASETS, DEMO_EU_KEY, DEMO_KEY, demoKeysConfig, demoKeysFile, ensureDemoData, generateDemo } from '../src/demo/index.js';
import { LocalSource } from '../src/source/local-source.js';
import { allNamedDatasets, findProduct } from '../src/catalog/products.js';
import type { Logger } from '../src/log/logger.js';
import { SERIES_KEY_METADATA } from '../src/snapshot/arrow-writer.js';
import { parseManifest, partsOf } from '../src/snapshot/manifest.js';
import type { Manifest } from '../src/snapshot/manifest.js';
import { US_PER_DAY, dayOfUs, parseDate, parseRfc3339 } from '../src/time/instant.js';

const CREATED_AT = '2026-11-20T23:30:00Z';
const HOUR = 3600 * 1_000_000;
const UNIT_US: Record<number, number> = { [TimeUnit.SECOND]: 1_000_000, [TimeUnit.MILLISECOND]: 1000, [TimeUnit.MICROSECOND]: 1 };

interface Loaded {
  readonly id: string;
  readonly manifest: Manifest;
  readonly bytes: Uint8Array;
  readonly table: Table;
  readonly seriesKey: string[];
  readonly valueNames: string[];
  readonly valueColumns: Vector[];
  /** Per row: business day, and the three stamps as microseconds. */
  readonly date: number[];
  readonly eff: number[];
  readonly obs: number[];
  readonly ing: number[];
  /** Per row: date + series key, the identity of a key. */
  readonly key: string[];
  readonly floorDay: number;
}

function column(t: Table, name: string): Vector {
  const c = t.getChild(name);
  if (c === null) throw new Error(`missing column ${name}`);
  return c;
}

/** Instants of a Date32 or Timestamp column, in microseconds. */
function instants(v: Vector): number[] {
  const out: number[] = [];
  for (const d of v.data) {
    const scale = DataType.isDate(d.type) ? US_PER_DAY : UNIT_US[(d.type as { unit: number }).unit]!;
    for (let i = 0; i < d.length; i++) out.push(Number(d.values[d.offset + i]) * scale);
  }
  return out;
}

async function load(dir: string, productId: string, dataset: string): Promise<Loaded> {
  const manifest = parseManifest(await readFile(join(dir, productId, dataset, 'manifest.json')));
  const bytes = await readFile(join(dir, productId, dataset, partsOf(manifest)[0]!.object));
  const table = tableFromIPC(bytes);
  const seriesKey = JSON.parse(table.schema.metadata.get(SERIES_KEY_METADATA) ?? 'null') as string[];
  const date = instants(column(table, 'date')).map(dayOfUs);
  const keyCols = seriesKey.map((k) => column(table, k).toArray() as string[]);
  const fixed = new Set(['date', 'str_effective_at', 'str_observed_at', 'str_ingested_at', 'model_version', ...seriesKey]);
  const valueNames = table.schema.fields.map((f) => f.name).filter((n) => !fixed.has(n));
  return {
    id: `${productId}/${dataset}`,
    manifest,
    bytes,
    table,
    seriesKey,
    valueNames,
    valueColumns: valueNames.map((n) => column(table, n)),
    date,
    eff: instants(column(table, 'str_effective_at')),
    obs: instants(column(table, 'str_observed_at')),
    ing: instants(column(table, 'str_ingested_at')),
    key: date.map((d, i) => [d, ...keyCols.map((c) => c[i])].join('|')),
    floorDay: parseDate(findProduct(productId)!.floor!)!,
  };
}

const versionCache = new WeakMap<Loaded, Map<string, number[]>>();

/** Row indices per key, each list ordered as PIT-4 orders versions (oldest first). */
function versionsByKey(l: Loaded): Map<string, number[]> {
  const cached = versionCache.get(l);
  if (cached !== undefined) return cached;
  const out = new Map<string, number[]>();
  versionCache.set(l, out);
  l.key.forEach((k, i) => {
    const rows = out.get(k);
    if (rows === undefined) out.set(k, [i]);
    else rows.push(i);
  });
  for (const rows of out.values()) rows.sort((a, b) => l.obs[a]! - l.obs[b]! || l.ing[a]! - l.ing[b]!);
  return out;
}

function rowValues(l: Loaded, i: number): unknown[] {
  return l.valueColumns.map((c) => c.get(i));
}

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const quiet = (): Logger & { msgs: string[] } => {
  const msgs: string[] = [];
  const log: Logger & { msgs: string[] } = {
    msgs,
    debug: () => {},
    info: (m) => msgs.push(m),
    warn: (m) => msgs.push(m),
    error: (m) => msgs.push(m),
    isEnabled: () => true,
    child: () => log,
  };
  return log;
};

describe('demo data set', () => {
  let root: string;
  let dirA: string;
  let dirB: string;
  const data = new Map<string, Loaded>();

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'pitcache-demo-'));
    dirA = join(root, 'a');
    dirB = join(root, 'b');
    await ensureDemoData(dirA, quiet());
    await generateDemo(dirB);
    for (const { productId, dataset } of allNamedDatasets()) data.set(`${productId}/${dataset}`, await load(dirA, productId, dataset));
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  const each = (): Loaded[] => [...data.values()];
  const get = (id: string): Loaded => data.get(id)!;

  it('is deterministic: two generations are byte-identical', async () => {
    const a = (await filesUnder(dirA)).filter((f) => f.split('/').length > 1);
    const b = await filesUnder(dirB);
    expect(a).toEqual(b);
    expect(a.length).toBe(27); // per dataset: manifest.json, its history/ copy (contract 12) and the snapshot
    for (const f of a) expect(Buffer.compare(await readFile(join(dirA, f)), await readFile(join(dirB, f))), f).toBe(0);
  });

  it('holds all nine named datasets, each with a valid generation-1 manifest whose sha256 and rows match', async () => {
    expect(await new LocalSource(dirA).listDatasets()).toEqual(
      [...allNamedDatasets()].sort((x, y) => (`${x.productId}/${x.dataset}` < `${y.productId}/${y.dataset}` ? -1 : 1)),
    );
    for (const l of each()) {
      expect(l.manifest).toMatchObject({ generation: 1, object: 'snapshots/00000001.arrow', created_at: CREATED_AT });
      expect(`${l.manifest.product_id}/${l.manifest.dataset}`).toBe(l.id);
      expect(createHash('sha256').update(l.bytes).digest('hex')).toBe(l.manifest.sha256);
      expect(l.manifest.rows).toBe(l.table.numRows);
    }
  });

  it('stays modest: well under 400k row-versions, several years of daily history', () => {
    const total = each().reduce((n, l) => n + l.table.numRows, 0);
    expect(total).toBeLessThan(400_000);
    for (const l of each()) {
      expect(Math.min(...l.date), l.id).toBe(parseDate('2021-01-01'));
      expect(Math.max(...l.date), l.id).toBeGreaterThanOrEqual(parseDate('2026-11-13')!);
    }
  });

  it('has the contract columns with their Arrow types, and a mix of units and key encodings', () => {
    const units = new Set<number>();
    const keyKinds = new Set<string>();
    let dateEffective = 0;
    for (const l of each()) {
      const names = l.table.schema.fields.map((f) => f.name);
      expect(names.slice(0, 5), l.id).toEqual(['date', 'str_effective_at', 'str_observed_at', 'str_ingested_at', 'model_version']);
      expect(DataType.isDate(column(l.table, 'date').type), l.id).toBe(true);
      for (const stamp of ['str_effective_at', 'str_observed_at', 'str_ingested_at']) {
        const t = column(l.table, stamp).type as DataType;
        if (stamp === 'str_effective_at' && DataType.isDate(t)) {
          dateEffective++;
          continue;
        }
        expect(DataType.isTimestamp(t), `${l.id} ${stamp}`).toBe(true);
        expect(t).toMatchObject({ timezone: 'UTC' });
        if (!DataType.isTimestamp(t)) continue;
        expect([TimeUnit.SECOND, TimeUnit.MILLISECOND, TimeUnit.MICROSECOND]).toContain(t.unit);
        units.add(t.unit);
      }
      expect(DataType.isUtf8(column(l.table, 'model_version').type)).toBe(true);
      for (const k of l.seriesKey) {
        const t = column(l.table, k).type as DataType;
        const dict = DataType.isDictionary(t) && DataType.isUtf8(t.dictionary);
        expect(DataType.isUtf8(t) || dict, `${l.id} ${k}`).toBe(true);
        keyKinds.add(dict ? 'dict' : 'utf8');
      }
      expect(l.valueNames.length, l.id).toBeGreaterThanOrEqual(4);
    }
    expect(units).toEqual(new Set([TimeUnit.SECOND, TimeUnit.MILLISECOND, TimeUnit.MICROSECOND]));
    expect(keyKinds).toEqual(new Set(['dict', 'utf8']));
    expect(dateEffective).toBeGreaterThanOrEqual(1);
    const nulls = each().reduce((n, l) => n + l.valueNames.reduce((m, v) => m + column(l.table, v).nullCount, 0), 0);
    expect(nulls).toBeGreaterThan(0);
  });

  it('declares every filter parameter of its product as a series-key column, with the documented values', () => {
    for (const l of each()) {
      for (const f of findProduct(l.id.split('/')[0]!)!.filters) expect(l.seriesKey, l.id).toContain(f.param);
    }
    const distinct = (id: string, col: string): Set<string> => new Set(column(get(id).table, col).toArray() as string[]);
    expect(distinct('glmi/marginality', 'basin')).toEqual(new Set(['atlantic', 'pacific', 'middle_east']));
    expect([...distinct('gbsi_eu/system_stress', 'country')]).toEqual(expect.arrayContaining(['DE', 'FR', 'NL', 'IT', 'AT', 'BE', 'ES', 'PL', 'CZ', 'DK']));
    expect([...distinct('pemi/grid_stress', 'bidding_zone')]).toEqual(expect.arrayContaining(['DE-LU', 'FR', 'NL', 'IT-NORD', 'DK1', 'NO2', 'SE3']));
    expect([...distinct('wrsi/forecast_stress', 'geography')]).toEqual(expect.arrayContaining(['US', 'ERCOT', 'PJM', 'MISO', 'CAISO']));
    expect(distinct('wrsi/forecast_stress', 'region_type')).toEqual(new Set(['country', 'iso']));
    expect(distinct('wssi_us/demand_shock', 'region_type').size).toBeGreaterThanOrEqual(2);
  });

  it('carries model_version "1.0" on every row (PIT-5)', () => {
    for (const l of each()) expect(new Set(column(l.table, 'model_version').toArray()), l.id).toEqual(new Set(['1.0']));
  });

  it('moves effective by the publication lag (PIT-1): storage several days, gas balance a day, weather and grid none', () => {
    const lagDays = (id: string): Set<number> => {
      const l = get(id);
      return new Set(l.eff.map((e, i) => dayOfUs(e) - l.date[i]!));
    };
    expect(lagDays('gbsi_us/storage_surprise')).toEqual(new Set([6]));
    expect(lagDays('gbsi_us/system_stress')).toEqual(new Set([1]));
    expect(lagDays('gbsi_eu/system_stress')).toEqual(new Set([1]));
    for (const id of ['wrsi/forecast_stress', 'wssi_us/demand_shock', 'pemi/grid_stress']) {
      const l = get(id);
      expect(
        l.eff.every((e, i) => e === l.date[i]! * US_PER_DAY),
        id,
      ).toBe(true);
    }
  });

  it('never observes before effective nor ingests before observing, and nothing is after created_at', () => {
    const cutoff = parseRfc3339(CREATED_AT)!;
    for (const l of each()) {
      for (let i = 0; i < l.date.length; i++) {
        if (!(l.eff[i]! <= l.obs[i]! && l.obs[i]! <= l.ing[i]! && l.ing[i]! <= cutoff))
          throw new Error(`${l.id} row ${i} breaks effective <= observed <= ingested <= created_at`);
      }
    }
  });

  it('backfills rows published before the vintage floor on the floor day, one version each', () => {
    for (const l of each()) {
      const keys = versionsByKey(l);
      let backfilled = 0;
      const bad: string[] = [];
      for (const [key, rows] of keys) {
        const first = rows[0]!;
        if (dayOfUs(l.eff[first]!) >= l.floorDay) continue;
        backfilled++;
        if (rows.length !== 1 || dayOfUs(l.obs[first]!) !== l.floorDay) bad.push(key);
      }
      expect(bad, l.id).toEqual([]);
      expect(backfilled / keys.size, l.id).toBeGreaterThan(0.8);
      expect(Math.min(...l.obs.map(dayOfUs)), l.id).toBe(l.floorDay);
    }
  });

  it('restates at least 10% of post-floor keys with a later observed and a different value (section 3)', () => {
    for (const l of each()) {
      let post = 0;
      let restated = 0;
      const unchanged: string[] = [];
      for (const [key, rows] of versionsByKey(l)) {
        // Only a value that differs from the stored (latest) one is a new version.
        if (rows.length > 1) {
          const values = rows.map((r) => JSON.stringify(rowValues(l, r)));
          if (values.some((v, j) => j > 0 && v === values[j - 1])) unchanged.push(key);
        }
        if (l.date[rows[0]!]! < l.floorDay) continue;
        post++;
        if (new Set(rows.map((r) => l.obs[r])).size > 1) restated++;
      }
      expect(unchanged, l.id).toEqual([]);
      expect(restated / post, l.id).toBeGreaterThanOrEqual(0.1);
    }
  });

  it('gives 14-19% of gbsi_us/system_stress post-floor keys two versions with the same observed, different values and ingested (PIT-4)', () => {
    const l = get('gbsi_us/system_stress');
    let post = 0;
    let tied = 0;
    for (const rows of versionsByKey(l).values()) {
      if (l.date[rows[0]!]! < l.floorDay) continue;
      post++;
      const tie = rows.slice(1).some((r, j) => {
        const p = rows[j]!;
        return l.obs[r] === l.obs[p] && l.ing[r] !== l.ing[p] && JSON.stringify(rowValues(l, r)) !== JSON.stringify(rowValues(l, p));
      });
      if (tie) tied++;
    }
    expect(tied / post).toBeGreaterThanOrEqual(0.14);
    expect(tied / post).toBeLessThanOrEqual(0.19);
    for (const other of each().filter((x) => x.id !== l.id)) {
      const ties = [...versionsByKey(other)].filter(([, rows]) => new Set(rows.map((r) => other.obs[r])).size !== rows.length);
      expect(
        ties.map(([key]) => key),
        other.id,
      ).toEqual([]);
    }
  });

  it('shows a full rebuild in pemi/grid_stress: every row written before it was re-ingested that day, observed unchanged (PIT-3)', () => {
    const l = get('pemi/grid_stress');
    const late = l.ing.map((g, i) => i).filter((i) => l.ing[i]! - l.obs[i]! > 2 * US_PER_DAY);
    const rebuildDay = dayOfUs(Math.min(...late.map((i) => l.ing[i]!)));
    expect(late.length / l.ing.length).toBeGreaterThan(0.5);
    expect(new Set(late.map((i) => dayOfUs(l.ing[i]!)))).toEqual(new Set([rebuildDay]));
    // Every row observed before the rebuild carries its ingestion time, whatever its history.
    const missed = l.obs.map((o, i) => i).filter((i) => dayOfUs(l.obs[i]!) < rebuildDay && dayOfUs(l.ing[i]!) !== rebuildDay);
    expect(missed).toEqual([]);
    expect(l.obs.some((o) => dayOfUs(o) > rebuildDay)).toBe(true);
    for (const other of each().filter((x) => x.id !== l.id)) {
      expect(Math.max(...other.ing.map((g, i) => g - other.obs[i]!)), other.id).toBeLessThan(HOUR);
    }
  });

  it('moves like series, not white noise: the headline value persists from day to day', () => {
    for (const id of [
      'gbsi_us/system_stress',
      'gbsi_eu/system_stress',
      'pemi/grid_stress',
      'glmi/marginality',
      'wrsi/forecast_stress',
      'wssi_us/demand_shock',
    ]) {
      const l = get(id);
      const head = column(l.table, l.valueNames[0]!);
      const bySeries = new Map<string, number[]>();
      for (const rows of versionsByKey(l).values()) {
        const r = rows[rows.length - 1]!;
        const series = l.key[r]!.split('|').slice(1).join('|');
        const list = bySeries.get(series) ?? bySeries.set(series, []).get(series)!;
        list.push(head.get(r) as number);
      }
      for (const [series, xs] of bySeries) expect(autocorrelation(xs), `${id} ${series}`).toBeGreaterThan(0.4);
    }
  });

  it('reuses a generated folder instead of generating again', async () => {
    const log = quiet();
    const before = (await stat(join(dirA, 'pemi/grid_stress/manifest.json'))).mtimeMs;
    await ensureDemoData(dirA, log);
    expect(log.msgs).toEqual(['demo data set found']);
    expect((await stat(join(dirA, 'pemi/grid_stress/manifest.json'))).mtimeMs).toBe(before);
    expect(JSON.parse(await readFile(join(dirA, 'keys.json'), 'utf8'))).toEqual(demoKeysFile());
  });

  it('ships demo keys that form a valid keys file: one for everything, one for gbsi_eu and pemi, one admin', () => {
    const cfg = demoKeysConfig();
    const bySecret = (k: string) => cfg.keys.find((e) => e.sha256 === createHash('sha256').update(k).digest('hex'));
    expect(DEMO_KEY).toBe('pitcache-demo-key');
    expect(bySecret(DEMO_KEY)).toMatchObject({ products: '*', admin: false, rateLimit: null });
    expect(bySecret(DEMO_EU_KEY)).toMatchObject({ products: ['gbsi_eu', 'pemi'], admin: false });
    expect(bySecret(DEMO_ADMIN_KEY)).toMatchObject({ products: '*', admin: true, plaintext: false });
    expect(DEMO_DATASETS.length).toBe(9);
  });
});

function autocorrelation(xs: number[]): number {
  const n = xs.length;
  const mean = xs.reduce((a, x) => a + x, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    den += (xs[i]! - mean) ** 2;
    if (i > 0) num += (xs[i]! - mean) * (xs[i - 1]! - mean);
  }
  return den === 0 ? 1 : num / den;
}
