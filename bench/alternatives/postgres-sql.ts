/**
 * PostgreSQL SQL for one query plan. Resolution is DISTINCT ON (date, series key) ordered by
 * observed, ingested, position descending: with the index (date, key..., observed DESC,
 * ingested DESC, pos DESC) the rows come out of the index already resolved and in the
 * contract's order, so LIMIT stops the scan early (a page walk reads only its page). With one
 * series fixed by filters, the index (key..., date, ...) gives the same order. `latest` walks a
 * table of series with LATERAL: per series one backward probe for the newest visible date,
 * one forward probe for its newest version. Text columns use COLLATE "C": byte order, which
 * for UTF-8 is the contract's order.
 */
import type { BenchDataset } from './types.js';
import type { KeysetAfter, QueryPlan, SqlParam } from './duckdb-postgres-plan.js';
import {
  ParamList,
  afterCondition,
  dateConditions,
  filterConditions,
  formatDay,
  formatUs,
  ident,
  tableName,
  versionConditions,
  visibilityConditions,
} from './duckdb-postgres-plan.js';

/** PIT-4: the newest version first; `pos` (snapshot position) breaks full ties. */
function newest(alias = ''): string {
  return `${alias}"str_observed_at" DESC, ${alias}"str_ingested_at" DESC, ${alias}"pos" DESC`;
}

function whereOf(terms: readonly string[]): string {
  return terms.length === 0 ? '' : ` WHERE ${terms.join(' AND ')}`;
}

const PG_TYPE: Record<string, string> = {
  date32: 'date',
  timestamp: 'timestamptz',
  utf8: 'text COLLATE "C"',
  float64: 'double precision',
  float32: 'real',
  int32: 'bigint', // the bench calls every Arrow integer int32; bigint holds them all
  bool: 'boolean',
};

export function pgTable(ds: BenchDataset): string {
  return ident(tableName(ds));
}

export function pgSeriesTable(ds: BenchDataset): string {
  return ident(tableName(ds) + '__series');
}

/** Before COPY: the table, `pos` numbered by COPY in file (= snapshot) order. */
export function pgCreateTable(ds: BenchDataset): string {
  const cols = ds.columns.map((c) => {
    const t = c.name === 'str_effective_at' ? 'timestamptz' : PG_TYPE[c.type];
    if (t === undefined) throw new Error(`${ds.id}: column ${c.name} has a type PostgreSQL is not mapped for: ${c.type}`);
    return `${ident(c.name)} ${t}`;
  });
  return `DROP TABLE IF EXISTS ${pgTable(ds)}; CREATE TABLE ${pgTable(ds)} (${cols.join(', ')}, "pos" bigint GENERATED ALWAYS AS IDENTITY)`;
}

export function pgCopy(ds: BenchDataset): string {
  return `COPY ${pgTable(ds)} (${ds.columns.map((c) => ident(c.name)).join(', ')}) FROM STDIN WITH (FORMAT csv, HEADER true)`;
}

/** After COPY: indexes, heap in (date, key) order, the series table, statistics. */
export function pgIndexStatements(ds: BenchDataset): string[] {
  const t = pgTable(ds);
  const name = tableName(ds);
  const key = ds.seriesKey.map(ident);
  // str_effective_at last: the visibility test is then an index condition, checked on the
  // index tuple, so versions not yet effective are skipped without visiting the heap (and
  // `latest`'s probe for the newest visible date becomes an index-only scan).
  const tail = `${newest()}, "str_effective_at"`;
  const out = [`CREATE INDEX ${ident(name + '__by_date')} ON ${t} ("date", ${[...key, tail].join(', ')})`];
  if (key.length > 0) {
    out.push(`CREATE INDEX ${ident(name + '__by_series')} ON ${t} (${key.join(', ')}, "date", ${tail})`);
    out.push(`DROP TABLE IF EXISTS ${pgSeriesTable(ds)}`);
    out.push(`CREATE TABLE ${pgSeriesTable(ds)} AS SELECT DISTINCT ${key.join(', ')} FROM ${t}`);
    out.push(`CREATE UNIQUE INDEX ON ${pgSeriesTable(ds)} (${key.join(', ')})`);
    out.push(`VACUUM ANALYZE ${pgSeriesTable(ds)}`);
  }
  // Window and page queries read many rows in date order: keep the heap in that order too.
  out.push(`CLUSTER ${t} USING ${ident(name + '__by_date')}`);
  out.push(`VACUUM ANALYZE ${t}`);
  return out;
}

/** A parameter as a SQL literal (psql has no bind parameters). */
export function pgLiteral(p: SqlParam): string {
  switch (p.type) {
    case 'text':
      return `'${p.value.replaceAll("'", "''")}'`;
    case 'date':
      return `DATE '${formatDay(p.value)}'`;
    case 'timestamp':
      return `TIMESTAMPTZ '${formatUs(p.value)}'`;
    case 'int':
      return String(p.value);
  }
}

export function literalParams(): ParamList {
  return new ParamList((_, p) => pgLiteral(p));
}

/** The page a keyset walk starts with: before every real (date, key). */
export const PG_BEFORE_ALL = (ds: BenchDataset): KeysetAfter => ({ date: -719_162 /* 0001-01-01 */, keys: ds.seriesKey.map(() => '') });

/**
 * `count`: `SELECT count(*)` of the unlimited answer. Otherwise the rows, `extraRows` more
 * than the limit (1 tells whether another page follows).
 */
export function pgQuery(ds: BenchDataset, plan: QueryPlan, after: KeysetAfter | null, mode: 'rows' | 'count', params: ParamList, extraRows = 0): string {
  const key = ds.seriesKey.map(ident);
  const body = pgBody(ds, plan, after, params);
  if (mode === 'count') return `SELECT count(*) FROM (${body}) AS c`;
  const limit = params.add({ type: 'int', value: plan.limit + extraRows });
  // DISTINCT ON already yields the contract's order; latest sorts its few rows here.
  if (plan.mode !== 'latest') return `${body} LIMIT ${limit}`;
  return `${body} ORDER BY ${['r."date"', ...key.map((k) => 'r.' + k)].join(', ')} LIMIT ${limit}`;
}

/** The resolved rows without LIMIT (in the contract's order except for `latest`). */
export function pgBody(ds: BenchDataset, plan: QueryPlan, after: KeysetAfter | null, params: ParamList): string {
  if (plan.mode === 'latest') return latestBody(ds, plan, after, params);
  const order = ['"date"', ...ds.seriesKey.map(ident)].join(', ');
  const where = versionConditions(plan, params);
  if (after !== null) where.push(afterCondition(ds, after, params));
  const cols = ds.columns.map((c) => ident(c.name)).join(', ');
  return `SELECT DISTINCT ON (${order}) ${cols} FROM ${pgTable(ds)}${whereOf(where)} ORDER BY ${order}, ${newest()}`;
}

function latestBody(ds: BenchDataset, plan: QueryPlan, after: KeysetAfter | null, params: ParamList): string {
  const key = ds.seriesKey.map(ident);
  const cols = ds.columns.map((c) => 'v.' + ident(c.name)).join(', ');
  const sameSeries = (alias: string): string[] => key.map((k) => `${alias}.${k} = s.${k}`);
  const newestDate =
    `SELECT max(d."date") FROM ${pgTable(ds)} AS d` +
    whereOf([...sameSeries('d'), ...dateConditions({ ...plan, dateFrom: null }, params, 'd.'), ...visibilityConditions(plan, params, 'd.')]);
  const inner =
    `SELECT ${cols} FROM ${pgTable(ds)} AS v` +
    whereOf([...sameSeries('v'), `v."date" = (${newestDate})`, ...visibilityConditions(plan, params, 'v.')]) +
    ` ORDER BY ${newest('v.')} LIMIT 1`;
  const from = key.length === 0 ? '(SELECT 1) AS s' : `${pgSeriesTable(ds)} AS s`;
  const where = filterConditions(plan, params, 's.');
  if (after !== null) where.push(afterCondition(ds, after, params, 'r.'));
  return `SELECT r.* FROM ${from} CROSS JOIN LATERAL (${inner}) AS r${whereOf(where)}`;
}
