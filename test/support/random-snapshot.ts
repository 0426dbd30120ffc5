/**
 * Seeded random snapshots for the differential test: the Arrow spec the server loads and
 * the same rows as plain JS values for the reference model. Everything the contract lets a
 * snapshot do is exercised on purpose: revisions, observed-time ties, full ties, pre-floor
 * history, Date32 or Timestamp effective times, every time unit, shuffled rows, several
 * record batches, dictionary and plain key columns, awkward values.
 */
import type { ColumnSpec, ColumnType, SnapshotSpec } from '../../src/snapshot/arrow-writer.js';

export type Unit = 's' | 'ms' | 'us';
export type CellValue = number | bigint | string | boolean | null;
export type Row = Readonly<Record<string, CellValue>>;

export interface ColumnDef {
  readonly name: string;
  readonly type: ColumnType;
  /** timestamp columns only */
  readonly unit?: Unit;
}

export interface GeneratedSnapshot {
  readonly productId: string;
  readonly dataset: string;
  readonly seed: number;
  readonly spec: SnapshotSpec;
  readonly columns: readonly ColumnDef[];
  readonly seriesKey: readonly string[];
  /** In snapshot order; timestamps as counts of their unit, Date32 as days, Int64 as bigint. */
  readonly rows: readonly Row[];
  /** the values each series-key column may hold (not all need to occur) */
  readonly keyPools: Readonly<Record<string, readonly string[]>>;
  readonly firstDay: number;
  readonly lastDay: number;
  /** every stored effective/observed/ingested instant, in µs: boundaries for as_of */
  readonly instantsUs: readonly number[];
}

/** mulberry32: tiny, seedable, the same sequence everywhere. */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** integer in [lo, hi], both inclusive */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [items[i], items[j]] = [items[j]!, items[i]!];
    }
    return items;
  }
}

export const DAY_US = 86_400_000_000;
const HOUR_US = 3_600_000_000;
const UNIT_US: Record<Unit, number> = { s: 1_000_000, ms: 1_000, us: 1 };

/**
 * Filter columns per product, from contract 3 (deliberately not read from src/catalog),
 * and of the invented products of test/support/invented-catalog.ts (contract 13).
 */
export const PRODUCT_FILTERS: Readonly<Record<string, readonly string[]>> = {
  gbsi_us: [],
  gbsi_eu: ['country'],
  pemi: ['bidding_zone'],
  glmi: ['basin'],
  wrsi: ['geography', 'region_type'],
  wssi_us: ['region_id', 'region_type'],
  acme_grid: ['site', 'band'],
  flatline: [],
};

/** Vintage floors of spec section 8, as days since the epoch. */
export const FLOOR_DATE: Readonly<Record<string, string>> = {
  gbsi_eu: '2026-01-13',
  wrsi: '2026-01-13',
  gbsi_us: '2026-03-02',
  wssi_us: '2026-03-02',
  glmi: '2026-03-02',
  pemi: '2026-03-02',
  acme_grid: '2026-02-20',
  flatline: '2026-01-20',
};

export function dayOf(date: string): number {
  return Date.parse(date + 'T00:00:00Z') / 86_400_000;
}

// Pools mix ASCII with case variants, bytes that need percent-encoding, and, last in each
// pool, a pair whose UTF-16 order is the reverse of its UTF-8 byte order (a character in
// U+E000..U+FFFF against an astral one). No commas: a comma separates filter values, so
// such a key could never be asked for.
const KEY_POOLS: Readonly<Record<string, readonly string[]>> = {
  country: ['DE', 'FR', 'NL', 'de', 'IT', 'AT', 'Ö1', 'A B', 'X+Y', 'P&Q=R', '50%', '\uFF21', '\u{1F600}'],
  bidding_zone: ['DE-LU', 'FR', 'NL', 'IT-NORD', 'SE3', 'NO2', 'dk1', 'é1', '\uFF21z', '\u{1F600}x'],
  basin: ['atlantic', 'pacific', 'middle_east', 'Atlantic', 'arctic', '\uE000', '\u{1F30A}'],
  geography: ['US', 'ERCOT', 'PJM', 'us', 'CAISO', 'Ünited', 'a/b', 'US\uFF47', 'US\u{1F30D}'],
  region_type: ['iso', 'state', 'country', 'Iso', 'census division', 'ĳ', '\uFFFD', '\u{10000}'],
  region_id: ['ERCOT', 'PJM', 'MISO', 'NYISO', 'ISO-NE', 'région', '\uFFFD', '\u{1F600}'],
  tenor: ['D+1', 'W+1', 'M+1', 'Q+1', '', 'é', 'A', 'z', '\uFF41', '\u{1F600}'],
  hub: ['henry', 'chicago', 'Henry', 'socal', 'ümlaut', '\uFFE5', '\u{1F525}'],
  site: ['north', 'south', 'North', 'a b', 'x/y', 'é-1', '\uFF53', '\u{1F3ED}'],
  band: ['low', 'high', 'mid', 'LOW', '1', '\uE001', '\u{1F4C8}'],
};

const TRICKY = [
  '"quoted"',
  'back\\slash',
  'tab\there',
  'line\nfeed\r',
  '\u0000nul',
  'ctl\u001f\u0001',
  'del\u007f',
  'ls\u2028ps\u2029',
  'ünïcødé',
  '日本語',
  '\u{1F600}\u{1F44D}\u{1F3FD}',
  '</script>',
  '',
  '\\u0041',
  'plain',
];

interface Version {
  day: number;
  series: readonly string[];
  effUs: number;
  obsUs: number;
  ingUs: number;
}

const align = (us: number, unit: Unit): number => Math.floor(us / UNIT_US[unit]) * UNIT_US[unit];

/**
 * `manySeries`: 20 to 40 series over at least two key columns, so that a query without
 * filters merges more series than the resolver sweeps (SWEEP_MAX_SERIES) and filtered ones
 * fewer: both merges are compared. Without it the random stream is the same as before.
 */
export interface GenerateOptions {
  readonly manySeries?: boolean;
  readonly series?: number;
  /** the series key as given (drawn from the product's filters otherwise): an invented product's 0 or 2 columns */
  readonly seriesKey?: readonly string[];
  /** every value column of pickValueColumns (each of its types), not a random choice of them */
  readonly allColumns?: boolean;
}

export function generateSnapshot(seed: number, productId: string, dataset: string, opts: GenerateOptions = {}): GeneratedSnapshot {
  const rng = new Rng(seed);
  const filters = PRODUCT_FILTERS[productId];
  if (filters === undefined) throw new Error(`unknown product ${productId}`);
  const floorDay = dayOf(FLOOR_DATE[productId]!);

  let seriesKey = [...filters];
  if (rng.chance(0.5)) rng.shuffle(seriesKey);
  if (filters.length === 0) seriesKey = rng.pick([[], ['hub'], ['hub', 'tenor']]);
  else if (rng.chance(0.35)) seriesKey.splice(rng.int(0, seriesKey.length), 0, 'tenor');
  if (opts.manySeries === true) {
    if (seriesKey.length === 0) seriesKey = ['hub', 'tenor'];
    else if (seriesKey.length === 1) seriesKey.push(seriesKey[0] === 'tenor' ? 'hub' : 'tenor');
  }
  if (opts.seriesKey !== undefined) seriesKey = [...opts.seriesKey];
  const keyPools: Record<string, readonly string[]> = {};
  for (const k of seriesKey) keyPools[k] = opts.series === undefined ? KEY_POOLS[k]! : widePool(KEY_POOLS[k]!, opts.series, seriesKey.length);

  const series = pickSeries(rng, seriesKey, keyPools, opts.series ?? (opts.manySeries === true ? rng.int(1, 12) + 28 : rng.int(1, 12)));
  const firstDay = floorDay - rng.int(0, 45);
  const span = opts.series === undefined ? rng.int(3, 70) : rng.int(15, 30);
  const density = rng.chance(0.4) ? 1 : rng.pick([0.15, 0.4, 0.7]);
  const days: number[] = [];
  for (let d = firstDay; d < firstDay + span; d++) if (d === firstDay || rng.chance(density)) days.push(d);

  const effUnit: Unit | 'date32' = rng.pick(['date32', 's', 'ms', 'us'] as const);
  const obsUnit = rng.pick(['s', 'ms', 'us', 'us'] as const);
  const ingUnit = rng.pick(['s', 'ms', 'us'] as const);
  const alignEff = (us: number): number => (effUnit === 'date32' ? Math.floor(us / DAY_US) * DAY_US : align(us, effUnit));
  const floorEdges = [floorDay * DAY_US, (floorDay + 1) * DAY_US - 1, (floorDay + 1) * DAY_US, (floorDay + 1) * DAY_US - 1_000_000];

  const versions: Version[] = [];
  const missing = rng.pick([0, 0.1, 0.3]);
  for (const s of series) {
    for (const day of days) {
      if (rng.chance(missing)) continue;
      const baseEff = alignEff((day + rng.pick([0, 0, 1, 2, 3])) * DAY_US + (rng.chance(0.5) ? 0 : rng.int(0, DAY_US - 1)));
      let obs = align(baseEff + rng.int(-36 * HOUR_US, 48 * HOUR_US), obsUnit);
      if (rng.chance(0.1)) obs = align(baseEff, obsUnit);
      if (rng.chance(0.08)) obs = align(rng.pick(floorEdges), obsUnit);
      let ing = ingestedFor(rng, obs, ingUnit);
      const n = rng.pick([1, 1, 1, 2, 2, 3, 4, 5]);
      for (let v = 0; v < n; v++) {
        if (v > 0) {
          const kind = rng.pick(['revision', 'revision', 'revision', 'tie', 'full-tie'] as const);
          if (kind === 'revision') {
            obs = align(obs + rng.pick([rng.int(1, 6 * HOUR_US), rng.int(DAY_US, 10 * DAY_US), rng.int(20 * DAY_US, 60 * DAY_US)]), obsUnit);
            ing = ingestedFor(rng, obs, ingUnit);
          } else if (kind === 'tie') {
            ing = align(ing + rng.pick([-1, 1]) * rng.int(1, 3 * DAY_US), ingUnit);
          }
        }
        // Effective time is per version: a restatement may move it.
        const eff = rng.chance(0.1) ? alignEff(baseEff + rng.int(-DAY_US, 3 * DAY_US)) : baseEff;
        versions.push({ day, series: s, effUs: eff, obsUs: obs, ingUs: ing });
      }
    }
  }
  rng.shuffle(versions);

  const valueColumns = pickValueColumns(rng, opts.allColumns === true);
  const columns: ColumnDef[] = [
    { name: 'date', type: 'date32' },
    effUnit === 'date32' ? { name: 'str_effective_at', type: 'date32' } : { name: 'str_effective_at', type: 'timestamp', unit: effUnit },
    { name: 'str_observed_at', type: 'timestamp', unit: obsUnit },
    { name: 'str_ingested_at', type: 'timestamp', unit: ingUnit },
    { name: 'model_version', type: 'utf8' },
    ...seriesKey.map((name): ColumnDef => ({ name, type: rng.chance(0.5) ? 'dict-utf8' : 'utf8' })),
    ...valueColumns,
  ];
  rng.shuffle(columns);

  const rows: Row[] = versions.map((v) => {
    const row: Record<string, CellValue> = {
      date: v.day,
      str_effective_at: effUnit === 'date32' ? v.effUs / DAY_US : v.effUs / UNIT_US[effUnit],
      str_observed_at: v.obsUs / UNIT_US[obsUnit],
      str_ingested_at: v.ingUs / UNIT_US[ingUnit],
      model_version: '1.0',
    };
    seriesKey.forEach((k, i) => (row[k] = v.series[i]!));
    for (const c of valueColumns) row[c.name] = randomCell(rng, c, v.day);
    return row;
  });

  const spec: SnapshotSpec = {
    seriesKey: [...seriesKey],
    columns: columns.map((c) => ({ ...c, values: rows.map((r) => r[c.name]) }) as unknown as ColumnSpec),
    batchRows: rows.length > 1 && rng.chance(0.8) ? rng.int(1, Math.max(1, Math.ceil(rows.length / 2))) : undefined,
  };
  const instantsUs = versions.flatMap((v) => [v.effUs, v.obsUs, v.ingUs]);
  return { productId, dataset, seed, spec, columns, seriesKey, rows, keyPools, firstDay, lastDay: firstDay + span - 1, instantsUs };
}

/**
 * A key column's pool grown with numbered values (after the pool's own, whose order
 * matters), so `columns` such columns make about 3 x `series` combinations.
 */
function widePool(pool: readonly string[], series: number, columns: number): string[] {
  const want = Math.ceil((3 * series) ** (1 / columns));
  const out = [...pool];
  for (let i = 0; out.length < want; i++) out.splice(out.length - 2, 0, `v${String(i).padStart(4, '0')}`);
  return out;
}

function pickSeries(rng: Rng, key: readonly string[], pools: Record<string, readonly string[]>, want: number): string[][] {
  if (key.length === 0) return [[]];
  const seen = new Map<string, string[]>();
  for (let tries = 0; seen.size < want && tries < want * 20; tries++) {
    // The order-sensitive pair at the end of each pool is drawn more often than its share.
    const s = key.map((k) => (rng.chance(0.3) ? pools[k]!.slice(-2) : pools[k]!)).map((p) => rng.pick(p));
    seen.set(JSON.stringify(s), s);
  }
  return [...seen.values()];
}

function ingestedFor(rng: Rng, obs: number, unit: Unit): number {
  const r = rng.next();
  // Mostly shortly after observed; sometimes a full rebuild rewrote it much later (PIT-3);
  // rarely before observed, which the contract does not forbid and ordering must survive.
  if (r < 0.8) return align(obs + rng.int(0, 3 * HOUR_US), unit);
  if (r < 0.93) return align(dayOf('2026-06-01') * DAY_US + rng.int(0, 150 * DAY_US), unit);
  return align(obs - rng.int(HOUR_US, 5 * DAY_US), unit);
}

function pickValueColumns(rng: Rng, all: boolean): ColumnDef[] {
  const columns: ColumnDef[] = [
    { name: 'value', type: 'float64' },
    { name: 'value_f32', type: 'float32' },
    { name: 'volume', type: 'int64' },
    { name: 'note', type: 'utf8' },
    { name: 'label', type: 'dict-utf8' },
    { name: 'flag', type: 'bool' },
    { name: 'small', type: rng.pick(['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32'] as const) },
    { name: 'ref_day', type: 'date32' },
    { name: 'published_at', type: 'timestamp', unit: rng.pick(['s', 'ms', 'us'] as const) },
  ];
  return all ? columns : columns.filter((c) => c.name === 'value' || rng.chance(0.7));
}

const INT_RANGE: Record<string, readonly [number, number]> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-(2 ** 31), 2 ** 31 - 1],
  uint8: [0, 255],
  uint16: [0, 65535],
  uint32: [0, 2 ** 32 - 1],
};

function randomCell(rng: Rng, c: ColumnDef, day: number): CellValue {
  if (rng.chance(0.08)) return null;
  switch (c.type) {
    case 'float64':
      return rng.pick([
        NaN,
        Infinity,
        -Infinity,
        Math.round((rng.next() * 200 - 100) * 10 ** rng.int(0, 6)) / 10 ** rng.int(0, 6),
        rng.next() * 1000 - 500,
        rng.int(-1e6, 1e6),
        1e21 * rng.next(),
        1.5e-7,
        5e-324,
        Number.MAX_VALUE,
        0.1 + 0.2,
      ]);
    case 'float32':
      return rng.pick([NaN, Infinity, -Infinity, Math.fround(rng.next() * 100 - 50), Math.fround(0.1), Math.fround(3.4e38), Math.fround(rng.int(-1000, 1000))]);
    case 'int64':
      return rng.pick([
        0n,
        BigInt(rng.int(-1e9, 1e9)),
        2n ** 53n,
        -(2n ** 53n),
        2n ** 53n + 1n,
        -(2n ** 53n) - 1n,
        2n ** 63n - 1n,
        -(2n ** 63n),
        BigInt(rng.int(0, 2 ** 30)) * 2n ** 30n,
      ]);
    case 'utf8':
      return rng.chance(0.5) ? rng.pick(TRICKY) : rng.pick(TRICKY) + rng.pick(TRICKY);
    case 'dict-utf8':
      return rng.pick(['low', 'high', 'Ü', '"q"', '\u{1F600}']);
    case 'bool':
      return rng.chance(0.5);
    // Pass-through times also before the epoch and far ahead: rendering must floor, not truncate.
    case 'date32':
      return rng.chance(0.1) ? rng.pick([-1, -25567, 2932896, 0]) : day + rng.int(-400, 400);
    case 'timestamp':
      // (Not 9999-12-31: the server refuses instants beyond ±2^53 µs, about years 1685..2255.)
      if (rng.chance(0.1)) {
        const unitUs = UNIT_US[c.unit ?? 'us'];
        return rng.pick([-1, 0, Math.floor((Date.UTC(1900, 0, 1) * 1000) / unitUs), Math.floor((Date.UTC(2200, 11, 31, 23, 59, 59) * 1000) / unitUs)]);
      }
      return Math.floor((day * DAY_US + rng.int(-5 * DAY_US, 5 * DAY_US)) / UNIT_US[c.unit ?? 'us']);
    default: {
      const [lo, hi] = INT_RANGE[c.type]!;
      return rng.pick([lo, hi, 0, rng.int(lo, hi)]);
    }
  }
}
