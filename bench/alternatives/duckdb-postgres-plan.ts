/**
 * One HTTP query of the bench (public parameters, contract 1-3) -> what the SQL alternatives
 * need to answer it: the visibility instants, the date window, the filters and the mode. Shared
 * by DuckDB and PostgreSQL so both translate the query list the same way, and written from the
 * contract's text rather than from src/query, so a shared misreading cannot hide.
 */
import type { BenchColumnType, BenchDataset, BenchQuery } from './types.js';

export const DAY_US = 86_400_000_000;

export type PlanMode =
  /** date_from given: every resolved row in [date_from, date_to] */
  | 'range'
  /** latest=true (default), no date_from: the newest resolved row of each series */
  | 'latest'
  /** latest=false, no date_from: every resolved row (date <= date_to) */
  | 'all';

export interface PlanFilter {
  readonly column: string;
  readonly values: readonly string[];
}

export interface QueryPlan {
  readonly mode: PlanMode;
  readonly filters: readonly PlanFilter[];
  /** days since the epoch, inclusive */
  readonly dateFrom: number | null;
  readonly dateTo: number | null;
  /** T in µs (inclusive); null = no as_of, every version visible */
  readonly asOfUs: number | null;
  /** max(T, end of the floor day) in µs: the bound on str_observed_at */
  readonly observedBoundUs: number | null;
  readonly limit: number;
}

/** Keyset position: rows strictly after (date, series key...) in output order. */
export interface KeysetAfter {
  readonly date: number;
  readonly keys: readonly string[];
}

const KNOWN = new Set(['latest', 'date_from', 'date_to', 'as_of', 'limit', 'cursor']);

export function planQuery(ds: BenchDataset, q: BenchQuery): QueryPlan {
  const p = q.params;
  for (const name of Object.keys(p)) {
    if (!KNOWN.has(name) && !ds.filters.includes(name)) throw new Error(`${ds.id}: unknown parameter ${name}`);
  }
  if (p.cursor !== undefined) throw new Error('cursor: the SQL alternatives page by keyset, not by cursor');
  const dateFrom = p.date_from === undefined ? null : parseDay(p.date_from);
  const dateTo = p.date_to === undefined ? null : parseDay(p.date_to);
  if (dateFrom !== null && dateTo !== null && dateFrom > dateTo) throw new Error('date_from > date_to');
  const latest = p.latest ?? 'true';
  if (latest !== 'true' && latest !== 'false') throw new Error(`bad latest ${latest}`);
  const asOfUs = p.as_of === undefined ? null : parseAsOfUs(p.as_of);
  const floorEndUs = (parseDay(ds.floorDate) + 1) * DAY_US - 1;
  const limit = p.limit === undefined ? 200 : Number(p.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new Error(`bad limit ${p.limit}`);
  // Declared series-key order keeps the SQL text (and so the prepared statement) stable.
  const filters = ds.seriesKey.filter((k) => p[k] !== undefined && ds.filters.includes(k)).map((column) => ({ column, values: p[column]!.split(',') }));
  return {
    mode: dateFrom !== null ? 'range' : latest === 'true' ? 'latest' : 'all',
    filters,
    dateFrom,
    dateTo,
    asOfUs,
    observedBoundUs: asOfUs === null ? null : Math.max(asOfUs, floorEndUs),
    limit,
  };
}

/** What decides the SQL text; queries of one shape share a prepared statement. */
export function planShape(plan: QueryPlan, withAfter: boolean): string {
  const f = plan.filters.map((x) => `${x.column}:${x.values.length}`).join(',');
  return `${plan.mode}|${f}|${plan.dateFrom !== null}|${plan.dateTo !== null}|${plan.asOfUs !== null}|${withAfter}`;
}

export function parseDay(text: string): number {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  const ms = m === null ? NaN : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (Number.isNaN(ms) || formatDay(ms / 86_400_000) !== text) throw new Error(`bad date ${text}`);
  return ms / 86_400_000;
}

/** as_of: a date is the last µs of that UTC day; a timestamp is that instant, floored to µs. */
export function parseAsOfUs(text: string): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return (parseDay(text) + 1) * DAY_US - 1;
  const m = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/.exec(text);
  if (m === null) throw new Error(`bad as_of ${text}`);
  const offsetMin = m[6] === undefined ? 0 : (m[6] === '-' ? -1 : 1) * (Number(m[7]) * 60 + Number(m[8]));
  const seconds = parseDay(m[1]!) * 86_400 + Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]) - offsetMin * 60;
  return seconds * 1_000_000 + Number((m[5] ?? '').padEnd(9, '0').slice(0, 6));
}

export function formatDay(days: number): string {
  return new Date(days * 86_400_000).toISOString().slice(0, 10);
}

/** µs -> `YYYY-MM-DDTHH:MM:SS.ffffffZ`, a literal both databases parse exactly. */
export function formatUs(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = us - ms * 1000;
  return new Date(ms).toISOString().slice(0, 23) + String(micros).padStart(3, '0') + 'Z';
}

/** `YYYY-MM-DD[T ]HH:MM:SS[.f]` with `Z` or `+00[:00]` (how the databases print UTC) -> µs. */
export function parseUtcUs(text: string): number {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(?:Z|\+00(?::?00)?)?$/.exec(text);
  if (m === null) throw new Error(`not a UTC timestamp: ${text}`);
  const seconds = parseDay(m[1]!) * 86_400 + Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]);
  return seconds * 1_000_000 + Number((m[5] ?? '').padEnd(6, '0'));
}

/** SQL identifier quoting, the same in both dialects. */
export function ident(name: string): string {
  return '"' + name.replaceAll('"', '""') + '"';
}

/** A dataset id ("pemi/grid_stress") as a table name. */
export function tableName(ds: BenchDataset): string {
  return ds.id.replace(/[^A-Za-z0-9_]/g, '__');
}

export function findDataset(datasets: readonly BenchDataset[], q: BenchQuery): BenchDataset {
  const ds = datasets.find((d) => d.id === q.dataset);
  if (ds === undefined) throw new Error(`no dataset ${q.dataset}`);
  return ds;
}

/** A value bound into a query; each dialect renders it as a parameter or a literal. */
export type SqlParam =
  | { readonly type: 'text'; readonly value: string }
  /** days since the epoch */
  | { readonly type: 'date'; readonly value: number }
  /** µs since the epoch, UTC */
  | { readonly type: 'timestamp'; readonly value: number }
  | { readonly type: 'int'; readonly value: number };

/** Collects parameters in order and hands out the placeholder text for each. */
export class ParamList {
  readonly values: SqlParam[] = [];
  constructor(private readonly placeholder: (index: number, p: SqlParam) => string) {}
  add(p: SqlParam): string {
    this.values.push(p);
    return this.placeholder(this.values.length, p);
  }
}

/** Filter terms (contract 3): exact matches on series-key columns, a list meaning any of them. */
export function filterConditions(plan: QueryPlan, params: ParamList, alias = ''): string[] {
  return plan.filters.map((f) => {
    const list = f.values.map((value) => params.add({ type: 'text', value }));
    return list.length === 1 ? `${alias}${ident(f.column)} = ${list[0]}` : `${alias}${ident(f.column)} IN (${list.join(', ')})`;
  });
}

export function dateConditions(plan: QueryPlan, params: ParamList, alias = ''): string[] {
  const out: string[] = [];
  if (plan.dateFrom !== null) out.push(`${alias}"date" >= ${params.add({ type: 'date', value: plan.dateFrom })}`);
  if (plan.dateTo !== null) out.push(`${alias}"date" <= ${params.add({ type: 'date', value: plan.dateTo })}`);
  return out;
}

/** Contract 1: effective <= T and observed <= max(T, F); no terms at all without as_of. */
export function visibilityConditions(plan: QueryPlan, params: ParamList, alias = ''): string[] {
  if (plan.asOfUs === null || plan.observedBoundUs === null) return [];
  return [
    `${alias}"str_effective_at" <= ${params.add({ type: 'timestamp', value: plan.asOfUs })}`,
    `${alias}"str_observed_at" <= ${params.add({ type: 'timestamp', value: plan.observedBoundUs })}`,
  ];
}

/**
 * WHERE terms on stored versions. Filters and dates are on key columns, so applying them
 * before resolution picks the same rows as applying them after (contract 2).
 */
export function versionConditions(plan: QueryPlan, params: ParamList, alias = ''): string[] {
  return [...filterConditions(plan, params, alias), ...dateConditions(plan, params, alias), ...visibilityConditions(plan, params, alias)];
}

/** (date, series key...) > (after...): the keyset term of a page walk. */
export function afterCondition(ds: BenchDataset, after: KeysetAfter, params: ParamList, alias = ''): string {
  const cols = ['date', ...ds.seriesKey].map((c) => alias + ident(c));
  const vals = [params.add({ type: 'date', value: after.date }), ...after.keys.map((value) => params.add({ type: 'text', value }))];
  return `(${cols.join(', ')}) > (${vals.join(', ')})`;
}

export type CanonicalValue = string | number | boolean | null;
export type CanonicalRow = Record<string, CanonicalValue>;

/**
 * A cell as either database hands it back (DuckDB value objects, or PostgreSQL's JSON text
 * forms) -> one comparable form: dates `YYYY-MM-DD`, timestamps µs, non-finite floats null.
 * Used only by the parity check, never inside a measured loop.
 */
export function canonicalCell(type: BenchColumnType, v: unknown): CanonicalValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'object' && 'days' in v) return formatDay(Number(v.days));
  if (typeof v === 'object' && 'micros' in v) return Number(v.micros);
  switch (type) {
    case 'date32':
      return String(v).slice(0, 10);
    case 'timestamp': {
      // pitcache renders a Date32 str_effective_at as a date: midnight UTC (contract 1)
      const text = String(v);
      return /^\d{4}-\d{2}-\d{2}$/.test(text) ? parseDay(text) * DAY_US : parseUtcUs(text);
    }
    case 'float64':
    case 'float32': {
      const x = Number(v); // PostgreSQL's JSON gives "NaN" / "Infinity" as strings
      if (!Number.isFinite(x)) return null;
      return type === 'float32' ? Math.fround(x) : x;
    }
    case 'int32':
      return Number(v);
    case 'bool':
      return v === true || v === 'true' || v === 't';
    default:
      return String(v);
  }
}

/** What the parity check needs beyond the bench interface: the rows of one page. */
export interface PageFetcher {
  /** up to `limit` resolved rows after `after`, and the keyset of the next page (null at the end) */
  fetchPage(q: BenchQuery, after: KeysetAfter | null): Promise<{ rows: CanonicalRow[]; next: KeysetAfter | null }>;
}

/** The canonical type of a stored column (str_effective_at is a timestamp in both databases). */
export function storedType(c: { readonly name: string; readonly type: BenchColumnType }): BenchColumnType {
  return c.name === 'str_effective_at' ? 'timestamp' : c.type;
}

/** The keyset of a canonical row (its date and series-key values). */
export function keysetOf(ds: BenchDataset, row: CanonicalRow): KeysetAfter {
  return { date: parseDay(String(row.date)), keys: ds.seriesKey.map((k) => String(row[k])) };
}
