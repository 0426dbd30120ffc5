import type { DatasetSchema } from './dataset-schema.js';
import { describeKey, type VersionTable } from './version-table.js';

/**
 * The rows of a whole input or stored generation as publishing keeps them: the batches as
 * they were read (each a VersionTable of typed columns), never joined into one array per
 * column. Joining would hold every column twice for a moment (the batches are freed only
 * when the collector gets to them), which a publish bounded by its columns cannot afford
 * (contract 14, docs/decisions.md#publish-in-bounded-memory). String columns of every chunk share one
 * list of distinct values (`strings`), so a code means the same value in every chunk.
 */
export interface ChunkedTable {
  readonly schema: DatasetSchema;
  readonly rows: number;
  readonly chunks: readonly VersionTable[];
  /** parallel to schema.columns: the distinct values every chunk's codes index; null for other columns */
  readonly strings: ReadonlyArray<string[] | null>;
}

/** The table's distinct values of a string column (every chunk's codes index them). */
export function stringsOf(table: ChunkedTable, name: string): string[] {
  const i = table.schema.columns.findIndex((c) => c.name === name);
  const s = table.strings[i];
  if (s === undefined || s === null) throw new Error(`column "${name}" must be a string column`);
  return s;
}

/** `date 2026-04-01, basin=atlantic` of row `row` (counted over the chunks), for messages. */
export function describeChunkedKey(table: ChunkedTable, row: number): string {
  let at = row;
  for (const chunk of table.chunks) {
    if (at < chunk.rows) return describeKey(chunk, at);
    at -= chunk.rows;
  }
  throw new Error(`row ${row} is past the table's ${table.rows} rows`);
}
