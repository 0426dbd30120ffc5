/**
 * A deliberately naive reading of the contract (sections 1, 2 and 4), written from its text
 * alone and sharing no code with src/query or src/store: scan every stored version, keep
 * the visible ones, resolve each key, filter, order, render. Time is exact (BigInt
 * nanoseconds), so it also checks the server's microsecond arithmetic at the boundaries.
 */
import type { CellValue, ColumnDef, Row } from './random-snapshot.js';
import { FLOOR_DATE } from './random-snapshot.js';

export interface RefDataset {
  readonly productId: string;
  readonly columns: readonly ColumnDef[];
  readonly seriesKey: readonly string[];
  readonly rows: readonly Row[];
}

/** Raw query parameter values, as the caller writes them (before URL-encoding). */
export interface RefParams {
  readonly latest?: string;
  readonly date_from?: string;
  readonly date_to?: string;
  readonly as_of?: string;
  /** filter parameter -> comma-separated values */
  readonly filters?: Readonly<Record<string, string>>;
}

export type JsonValue = string | number | boolean | null;

export interface RefAnswer {
  /** every matching row in order, as the parsed JSON the server should send */
  readonly rows: ReadonlyArray<Record<string, JsonValue>>;
  readonly totalCount: number;
  readonly dataLatestDate: string | null;
  readonly dataAgeHours: number | null;
  /** contract 16: as_of lies strictly before the end of the floor day (x-floor-applied) */
  readonly floorApplied: boolean;
}

const NS_PER_DAY = 86_400_000_000_000n;
const NS_PER: Record<string, bigint> = { s: 1_000_000_000n, ms: 1_000_000n, us: 1_000n };
const TWO_53 = 2n ** 53n;

export function parseDateDays(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return null;
  const ms = Date.parse(text + 'T00:00:00Z');
  // Date.parse rolls 02-30 over; a real calendar date formats back to itself.
  if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== text) return null;
  return ms / 86_400_000;
}

/** as_of text -> the instant it names, in ns: a date is the last instant of that UTC day. */
export function parseAsOfNs(text: string): bigint | null {
  const day = parseDateDays(text);
  if (day !== null) return BigInt(day + 1) * NS_PER_DAY - 1n;
  const m = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (m === null) return null;
  const d = parseDateDays(m[1]!);
  const [h, mi, s] = [Number(m[2]), Number(m[3]), Number(m[4])];
  if (d === null || h > 23 || mi > 59 || s > 59) return null;
  const offsetMin = m[6] === undefined ? 0 : (m[6] === '-' ? -1 : 1) * (Number(m[7]) * 60 + Number(m[8]));
  const seconds = BigInt(d) * 86_400n + BigInt(h * 3600 + mi * 60 + s - offsetMin * 60);
  return seconds * 1_000_000_000n + BigInt((m[5] ?? '').padEnd(9, '0'));
}

/** A stored time cell (Date32 = 00:00:00Z of that day) as an instant in ns. */
export function instantNs(col: ColumnDef, v: CellValue): bigint {
  if (typeof v !== 'number' && typeof v !== 'bigint') throw new Error(`column ${col.name}: not a time value: ${String(v)}`);
  if (col.type === 'date32') return BigInt(v) * NS_PER_DAY;
  return BigInt(v) * NS_PER[col.unit ?? 'us']!;
}

interface Prepared {
  readonly row: Row;
  readonly date: number;
  readonly eff: bigint;
  readonly obs: bigint;
  readonly ing: bigint;
  /** series key values, JSON: identity of the series */
  readonly series: string;
  /** series key values as UTF-8 bytes, for ordering */
  readonly seriesBytes: readonly Buffer[];
  readonly rendered: Record<string, JsonValue>;
}

// Converting every cell per query would make the naive scan slow for no extra insight:
// the per-row facts are computed once per dataset.
const prepared = new WeakMap<readonly Row[], Prepared[]>();

function prepare(ds: RefDataset): Prepared[] {
  const hit = prepared.get(ds.rows);
  if (hit !== undefined) return hit;
  const col = (name: string): ColumnDef => ds.columns.find((c) => c.name === name) ?? raise(`no column ${name}`);
  const [effCol, obsCol, ingCol] = [col('str_effective_at'), col('str_observed_at'), col('str_ingested_at')];
  const out = ds.rows.map((row) => ({
    row,
    date: row.date as number,
    eff: instantNs(effCol, row.str_effective_at!),
    obs: instantNs(obsCol, row.str_observed_at!),
    ing: instantNs(ingCol, row.str_ingested_at!),
    series: JSON.stringify(ds.seriesKey.map((k) => row[k])),
    seriesBytes: ds.seriesKey.map((k) => Buffer.from(row[k] as string, 'utf8')),
    rendered: renderRow(ds.columns, row),
  }));
  prepared.set(ds.rows, out);
  return out;
}

/** The whole answer of a valid query; throws on a query the contract calls a 400. */
export function referenceAnswer(ds: RefDataset, p: RefParams, nowMs: number): RefAnswer {
  const all = prepare(ds);
  const floorDay = parseDateDays(FLOOR_DATE[ds.productId] ?? raise(`no floor for ${ds.productId}`))!;
  const floorEnd = BigInt(floorDay + 1) * NS_PER_DAY - 1n;

  const t = p.as_of === undefined ? null : (parseAsOfNs(p.as_of) ?? raise(`bad as_of ${p.as_of}`));
  const obsBound = t === null ? null : t > floorEnd ? t : floorEnd;

  // Visibility and PIT-4 resolution, one pass in snapshot order: on a full tie the later
  // row replaces the earlier one.
  const best = new Map<string, Prepared>();
  let maxObs: bigint | null = null;
  for (const r of all) {
    if (t !== null && obsBound !== null && !(r.eff <= t && r.obs <= obsBound)) continue;
    if (maxObs === null || r.obs > maxObs) maxObs = r.obs;
    const key = `${r.date}|${r.series}`;
    const cur = best.get(key);
    if (cur === undefined || r.obs > cur.obs || (r.obs === cur.obs && r.ing >= cur.ing)) best.set(key, r);
  }
  const resolved = [...best.values()];
  const dataLatestDate = resolved.length === 0 ? null : formatDate(Math.max(...resolved.map((r) => r.date)));
  const refNs = t ?? BigInt(nowMs) * 1_000_000n;
  const dataAgeHours = maxObs === null ? null : Number(refNs - maxObs) / 3.6e12;

  let rows = resolved;
  for (const [param, list] of Object.entries(p.filters ?? {})) {
    const values = list.split(',');
    rows = rows.filter((r) => values.includes(r.row[param] as string));
  }
  const from = p.date_from === undefined ? null : (parseDateDays(p.date_from) ?? raise('bad date_from'));
  const to = p.date_to === undefined ? null : (parseDateDays(p.date_to) ?? raise('bad date_to'));
  if (from !== null && to !== null && from > to) raise('date_from > date_to');
  if (p.latest !== undefined && p.latest !== 'true' && p.latest !== 'false') raise('bad latest');
  rows = rows.filter((r) => (from === null || r.date >= from) && (to === null || r.date <= to));
  if (from === null && p.latest !== 'false') {
    const newest = new Map<string, number>();
    for (const r of rows) newest.set(r.series, Math.max(newest.get(r.series) ?? -Infinity, r.date));
    rows = rows.filter((r) => newest.get(r.series) === r.date);
  }

  rows.sort((a, b) => {
    if (a.date !== b.date) return a.date - b.date;
    for (let i = 0; i < a.seriesBytes.length; i++) {
      const c = Buffer.compare(a.seriesBytes[i]!, b.seriesBytes[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  // Stored instants are whole microseconds: the floor day ends at its last one, so an as_of within that microsecond is not before it.
  const floorEndUs = floorEnd - 999n;
  return { rows: rows.map((r) => r.rendered), totalCount: rows.length, dataLatestDate, dataAgeHours, floorApplied: t !== null && t < floorEndUs };
}

function renderRow(columns: readonly ColumnDef[], row: Row): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const c of columns) out[c.name] = renderCell(c, row[c.name] ?? null);
  return out;
}

/** Contract 4: the JSON value a cell should parse back to. */
export function renderCell(c: ColumnDef, v: CellValue): JsonValue {
  if (v === null) return null;
  switch (c.type) {
    case 'date32':
      return formatDate(v as number);
    case 'timestamp':
      return formatTimestamp(instantNs(c, v), c.unit ?? 'us');
    case 'float64':
    case 'float32': {
      const x = c.type === 'float32' ? Math.fround(v as number) : (v as number);
      return Number.isFinite(x) ? x : null;
    }
    case 'int64': {
      const b = BigInt(v as bigint);
      return b > TWO_53 || b < -TWO_53 ? b.toString() : Number(b);
    }
    default:
      return v as string | number | boolean;
  }
}

export function formatDate(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

export function formatTimestamp(ns: bigint, unit: string): string {
  const ms = ns / 1_000_000n - (ns % 1_000_000n < 0n ? 1n : 0n);
  const iso = new Date(Number(ms)).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  if (unit === 's') return iso.slice(0, 19) + 'Z';
  if (unit === 'ms') return iso;
  const micros = (((ns / 1000n) % 1000n) + 1000n) % 1000n;
  return iso.slice(0, 23) + String(micros).padStart(3, '0') + 'Z';
}

function raise(message: string): never {
  throw new Error(message);
}
