import type { DecodedColumn } from '../store/decode-arrow.js';
import { formatDate } from '../time/instant.js';
import type { DatasetSchema } from './dataset-schema.js';

/**
 * Rows of a dataset as publishing handles them: the decoded columns (typed arrays, strings
 * as codes into a list, timestamps in µs) in the order of `schema.columns`, rows in file
 * order. The current snapshot, an Arrow input and a CSV input all become one of these, in
 * the dataset's schema, so comparing and writing never care where rows came from.
 */
export interface VersionTable {
  readonly schema: DatasetSchema;
  readonly rows: number;
  /** parallel to schema.columns */
  readonly columns: readonly DecodedColumn[];
}

/** Columns that describe the write, not the value: a recomputation may change them freely (PIT-2, PIT-3). */
export const STAMP_COLUMNS: ReadonlySet<string> = new Set(['str_observed_at', 'str_ingested_at']);

/** Where column `name` is in the schema's columns (and so in every table's of it). */
export function columnIndex(schema: DatasetSchema, name: string): number {
  const i = schema.columns.findIndex((c) => c.name === name);
  if (i < 0) throw new Error(`column "${name}" is missing`);
  return i;
}

export function columnOf(table: VersionTable, name: string): DecodedColumn {
  const i = table.schema.columns.findIndex((c) => c.name === name);
  const col = table.columns[i];
  if (col === undefined) throw new Error(`column "${name}" is missing`);
  return col;
}

/** The µs values of a timestamp column (str_observed_at, str_ingested_at). */
export function instantsOf(table: VersionTable, name: string): Float64Array {
  const col = columnOf(table, name);
  if (col.kind !== 'timestamp') throw new Error(`column "${name}" must be a timestamp`);
  return col.values;
}

export function isNull(col: DecodedColumn, row: number): boolean {
  return col.validity !== null && col.validity[row] === 0;
}

/**
 * Whether two cells hold the same value. Floats compare with Object.is: bitwise equality
 * except that every NaN equals every NaN (a recomputed NaN is no revision), while 0 and -0
 * differ (they are different bits). Nulls equal nulls only.
 */
export function cellEquals(a: DecodedColumn, ra: number, b: DecodedColumn, rb: number): boolean {
  const na = isNull(a, ra);
  const nb = isNull(b, rb);
  if (na || nb) return na === nb;
  if (a.kind === 'string' && b.kind === 'string') return a.strings[a.codes[ra]!] === b.strings[b.codes[rb]!];
  if (a.kind === 'string' || b.kind === 'string') return false;
  return Object.is(a.values[ra], b.values[rb]);
}

/** A cell as a JS value (timestamps in µs), for messages and for writing. */
export function cellValue(col: DecodedColumn, row: number): string | number | bigint | boolean | null {
  if (isNull(col, row)) return null;
  switch (col.kind) {
    case 'string':
      return col.strings[col.codes[row]!]!;
    case 'bool':
      return col.values[row] !== 0;
    default:
      return col.values[row]!;
  }
}

/** `date 2026-04-01, basin=atlantic`: a key as an operator reads it. */
export function describeKey(table: VersionTable, row: number): string {
  const date = columnOf(table, 'date');
  const parts = [`date ${date.kind === 'date32' ? formatDate(date.values[row]!) : '?'}`];
  for (const name of table.schema.seriesKey) parts.push(`${name}=${JSON.stringify(cellValue(columnOf(table, name), row))}`);
  return parts.join(', ');
}
