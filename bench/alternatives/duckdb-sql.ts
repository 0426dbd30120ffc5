/**
 * DuckDB SQL for one query plan: PIT-4 resolution with QUALIFY row_number() over the key,
 * the visibility filter in WHERE (so zone maps of the sorted table can skip row groups), and
 * the contract's order: date, then the series key (VARCHAR compares bytes: UTF-8 order).
 */
import type { BenchDataset } from './types.js';
import type { KeysetAfter, QueryPlan, SqlParam } from './duckdb-postgres-plan.js';
import { ParamList, afterCondition, ident, tableName, versionConditions } from './duckdb-postgres-plan.js';

export interface BuiltSql {
  readonly sql: string;
  readonly params: readonly SqlParam[];
}

/** The newest version first; `pos` (snapshot position) breaks full ties. */
const NEWEST = `${ident('str_observed_at')} DESC, ${ident('str_ingested_at')} DESC, "pos" DESC`;

export function duckdbTableName(ds: BenchDataset): string {
  return ident(tableName(ds));
}

/**
 * `count` gives `SELECT count(*)` over the unlimited answer (metadata.total_count); `all`
 * every row in order (a streamed walk); `rows` one page, `limitPlusOne` fetching one more
 * row than the page to tell whether another follows.
 */
export function duckdbQuery(ds: BenchDataset, plan: QueryPlan, after: KeysetAfter | null, mode: 'rows' | 'count' | 'all', limitPlusOne = false): BuiltSql {
  const params = new ParamList((i) => `$${i}`);
  const cols = ds.columns.map((c) => ident(c.name)).join(', ');
  const series = ds.seriesKey.map(ident);
  const order = [ident('date'), ...series].join(', ');
  const where = versionConditions(plan, params);
  /** a row as a struct, for arg_max to carry whole rows */
  const struct = (): string => ds.columns.map((c) => `${sqlString(c.name)}: ${ident(c.name)}`).join(', ');
  let body: string;
  if (plan.mode === 'latest' && series.length > 0) {
    // arg_max per series by (date, observed, ingested, pos) is a hash aggregate; the
    // equivalent window (row_number over the series) sorts every visible row: 2-3x slower.
    const by = `(${ident('date')}, ${ident('str_observed_at')}, ${ident('str_ingested_at')}, "pos")`;
    const inner = `SELECT unnest(arg_max({${struct()}}, ${by})) FROM ${duckdbTableName(ds)}${whereText(where)} GROUP BY ${series.join(', ')}`;
    body = `SELECT * FROM (${inner}) AS r${after === null ? '' : ' WHERE ' + afterCondition(ds, after, params)}`;
  } else if (plan.mode === 'latest') {
    const inner = `SELECT ${cols} FROM ${duckdbTableName(ds)}${whereText(where)} QUALIFY row_number() OVER (ORDER BY ${ident('date')} DESC, ${NEWEST}) = 1`;
    body = `SELECT * FROM (${inner}) AS r${after === null ? '' : ' WHERE ' + afterCondition(ds, after, params)}`;
  } else {
    if (after !== null) where.push(afterCondition(ds, after, params));
    const oneSeries = series.length > 0 && ds.seriesKey.every((k) => plan.filters.some((f) => f.column === k && f.values.length === 1));
    // Measured at 1M rows: for one series' few rows arg_max (a hash aggregate) beats the
    // window's fixed cost by a third; over many series packing every row into a struct
    // costs more than the window's sort, by as much.
    body = oneSeries
      ? `SELECT * FROM (SELECT unnest(arg_max({${struct()}}, (${ident('str_observed_at')}, ${ident('str_ingested_at')}, "pos"))) ` +
        `FROM ${duckdbTableName(ds)}${whereText(where)} GROUP BY ${order}) AS r`
      : `SELECT ${cols} FROM ${duckdbTableName(ds)}${whereText(where)} QUALIFY row_number() OVER (PARTITION BY ${order} ORDER BY ${NEWEST}) = 1`;
  }
  if (mode === 'count') return { sql: `SELECT count(*) AS n FROM (${body}) AS c`, params: params.values };
  if (mode === 'all') return { sql: `${body} ORDER BY ${order}`, params: params.values };
  const limit = params.add({ type: 'int', value: plan.limit + (limitPlusOne ? 1 : 0) });
  return { sql: `${body} ORDER BY ${order} LIMIT ${limit}`, params: params.values };
}

function whereText(terms: readonly string[]): string {
  return terms.length === 0 ? '' : ' WHERE ' + terms.join(' AND ');
}

const SQL_TYPE: Record<string, string> = {
  date32: 'DATE',
  timestamp: 'TIMESTAMP',
  utf8: 'VARCHAR',
  float64: 'DOUBLE',
  float32: 'FLOAT',
  int32: 'BIGINT', // the bench calls every Arrow integer int32; BIGINT holds them all
  bool: 'BOOLEAN',
};

/** Column types for read_csv; str_effective_at is always a timestamp in the CSV (midnight for Date32). */
export function duckdbColumnTypes(ds: BenchDataset): Record<string, string> {
  const out: Record<string, string> = {};
  for (const c of ds.columns) {
    const t = c.name === 'str_effective_at' ? 'TIMESTAMP' : SQL_TYPE[c.type];
    if (t === undefined) throw new Error(`${ds.id}: column ${c.name} has a type DuckDB is not mapped for: ${c.type}`);
    out[c.name] = t;
  }
  return out;
}

/**
 * Loads the CSV side file, then rewrites it sorted, with `pos` = the row's position in the
 * snapshot (the staging table keeps file order, preserve_insertion_order being on, so its
 * rowid is that position). Sorted by date first, zone maps skip the row groups outside a
 * date window, which every workload but `latest` has; a 90-day window of all series is then
 * about as few row groups as one series' whole history is when sorted by series first
 * (measured at 1M rows: the dataset window 2.5x faster, one series no different).
 */
export function duckdbLoadStatements(ds: BenchDataset, csvPath: string, sortBy: 'series' | 'date' = 'series'): string[] {
  const types = duckdbColumnTypes(ds);
  const spec = Object.entries(types)
    .map(([name, t]) => `${sqlString(name)}: ${sqlString(t)}`)
    .join(', ');
  const stage = ident(tableName(ds) + '__stage');
  const key = sortBy === 'series' ? [...ds.seriesKey.map(ident), ident('date')] : [ident('date'), ...ds.seriesKey.map(ident)];
  const sortKey = [...key, ident('str_observed_at'), ident('str_ingested_at'), '"pos"'].join(', ');
  return [
    `DROP TABLE IF EXISTS ${stage}`,
    `CREATE TABLE ${stage} AS SELECT * FROM read_csv(${sqlString(csvPath)}, header = true, auto_detect = false, ` +
      `delim = ',', quote = '"', escape = '"', allow_quoted_nulls = false, columns = {${spec}})`,
    `CREATE OR REPLACE TABLE ${duckdbTableName(ds)} AS SELECT *, rowid AS "pos" FROM ${stage} ORDER BY ${sortKey}`,
    `DROP TABLE ${stage}`,
  ];
}

function sqlString(s: string): string {
  return "'" + s.replaceAll("'", "''") + "'";
}
