/**
 * The DuckDB side of the walk-forward bench: every stored version of a snapshot in one
 * table (times as BIGINT µs, the snapshot position as `pos`), and the whole walk-forward
 * as one SQL query, written the way a DuckDB user would: decision dates from range(),
 * a range join on the window, the contract's visibility in WHERE, PIT-4 as row_number()
 * over (decision date, key).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DataType, tableFromIPC, type Vector } from 'apache-arrow';
import { findProduct } from '../../src/catalog/products.js';

const DAY_US = 86_400_000_000;
const TIME_COLUMNS = new Set(['str_effective_at', 'str_observed_at', 'str_ingested_at']);
const UNIT_US = [1_000_000, 1_000, 1, 0.001];

/** One cell of a time column as µs since epoch (Date32 = its 00:00Z). */
function timeUs(v: Vector, i: number): number {
  if (DataType.isDate(v.type)) return Math.round((v.get(i) as number) / 86_400_000) * DAY_US;
  // apache-arrow hands timestamps back in ms: rebuild µs from the raw values.
  let at = i;
  for (const d of v.data) {
    if (at < d.length) return Number((d.values as BigInt64Array)[d.offset + at]!) * UNIT_US[(v.type as { unit: number }).unit]!;
    at -= d.length;
  }
  throw new Error('row out of range');
}

function csvCell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' && !Number.isFinite(v)) return '';
  const s = String(v);
  return /[",\n\r]/.test(s) || s === '' ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Loads a snapshot file into table `v`; returns its row count and the product's floor end (µs). */
export async function loadIntoDuckDb(conn: DuckDBConnection, snapshotPath: string, tmpDir: string): Promise<{ rows: number; floorEndUs: number }> {
  const t = tableFromIPC(await readFile(snapshotPath));
  const names = t.schema.fields.map((f) => f.name);
  const lines = [['pos', ...names].join(',')];
  const cols = names.map((n) => t.getChild(n)!);
  for (let i = 0; i < t.numRows; i++) {
    const cells = [String(i)];
    cols.forEach((c, j) => {
      const name = names[j]!;
      if (!c.isValid(i)) cells.push('');
      else if (TIME_COLUMNS.has(name)) cells.push(String(timeUs(c, i)));
      else if (name === 'date') cells.push(new Date(c.get(i) as number).toISOString().slice(0, 10));
      else cells.push(csvCell(c.get(i)));
    });
    lines.push(cells.join(','));
  }
  const csv = join(tmpDir, 'versions.csv');
  await writeFile(csv, lines.join('\n') + '\n');
  const types = `{'pos': 'BIGINT', 'date': 'DATE', 'str_effective_at': 'BIGINT', 'str_observed_at': 'BIGINT', 'str_ingested_at': 'BIGINT'}`;
  await conn.run(`CREATE TABLE v AS SELECT * FROM read_csv('${csv}', header = true, types = ${types})`);
  const floor = findProduct('pemi')!.floor;
  return { rows: t.numRows, floorEndUs: (Date.parse(`${floor}T00:00:00Z`) / 86_400_000 + 1) * DAY_US - 1 };
}

export interface WalkForwardSqlArgs {
  readonly series: string;
  /** first decision date, YYYY-MM-DD */
  readonly first: string;
  readonly decisions: number;
  readonly window: number;
  readonly floorEndUs: number;
}

export function walkForwardSql(a: WalkForwardSqlArgs): string {
  const firstDays = Date.parse(`${a.first}T00:00:00Z`) / 86_400_000;
  return `
WITH d AS (
  SELECT DATE '${a.first}' + CAST(i AS INTEGER) AS decision_date, (${firstDays} + i + 1) * ${DAY_US} - 1 AS t_us
  FROM range(0, ${a.decisions}) r(i)
)
SELECT * EXCLUDE (rn, t_us, pos) FROM (
  SELECT d.*, v.*, row_number() OVER (PARTITION BY d.decision_date, v.date ORDER BY v.str_observed_at DESC, v.str_ingested_at DESC, v.pos DESC) AS rn
  FROM d JOIN v ON v.bidding_zone = '${a.series}' AND v.date BETWEEN d.decision_date - ${a.window} AND d.decision_date
  WHERE v.str_effective_at <= d.t_us AND v.str_observed_at <= greatest(d.t_us, ${a.floorEndUs})
) WHERE rn = 1
ORDER BY decision_date, date`;
}
