import { ApiError } from '../errors.js';
import type { ArrowPassthrough } from '../format/arrow-passthrough.js';
import type { Column, StringColumn } from '../store/column.js';

/**
 * The events of one `asof_join` request (contract 15), parsed from any body format into
 * columns: `at` as instants (µs), the dataset's series-key columns as interned strings,
 * and every other column passed through as an output Column of its own kind. Nothing per
 * event is an object: a million events are a few typed arrays.
 */
export interface EventBatch {
  readonly count: number;
  /** each event's `at`, µs since epoch (a date is the end of its UTC day) */
  readonly atUs: Float64Array;
  /** the event columns in the order given, as they are answered (`at` a Timestamp µs over atUs) */
  readonly columns: readonly Column[];
  /** per series-key column of the dataset, in its declared order: the event column holding it */
  readonly keys: readonly StringColumn[];
  /**
   * An Arrow body answered in Arrow: per event column, the column as given (its type
   * kept, format/arrow-passthrough.ts), undefined for `at`; null otherwise.
   */
  readonly arrow?: readonly (ArrowPassthrough | undefined)[] | null;
}

/** What a body parser needs of the dataset: its series key (required columns) and the names a passthrough column must not take. */
export interface EventSchema {
  readonly seriesKey: readonly string[];
  /** every column of the dataset, and the answer's own (`floor_applied`) */
  readonly reserved: ReadonlySet<string>;
}

export const MAX_EVENTS = 1_000_000;

/** 400 `invalid_body`: the events cannot be read (the message names the row, 0-based, and the column when one is at fault). */
export function badEvents(message: string): ApiError {
  return new ApiError('invalid_body', message);
}

export function missingCell(row: number, column: string): ApiError {
  return badEvents(`row ${row}: column "${column}" is missing (every event needs "at" and each series-key column)`);
}

export function badAt(row: number, got: string): ApiError {
  return badEvents(`row ${row}: column "at" must be an RFC 3339 instant with Z or an offset, or a date YYYY-MM-DD; got ${JSON.stringify(got.slice(0, 64))}`);
}

export function tooManyEvents(): ApiError {
  return new ApiError('payload_too_large', `at most ${MAX_EVENTS} events per request`);
}

/**
 * Checks the event columns' names once: `at` and each series-key column present, no name
 * twice, and no passthrough column named like a dataset column (its value would be
 * ambiguous in the answer). `rowForMissing` is the row a missing column is reported at.
 */
export function checkEventNames(names: readonly string[], schema: EventSchema, rowForMissing = 0): void {
  const seen = new Set<string>();
  for (const n of names) {
    if (seen.has(n)) throw badEvents(`column "${n}" is given twice`);
    seen.add(n);
    if (n !== 'at' && !schema.seriesKey.includes(n) && schema.reserved.has(n))
      throw badEvents(`column "${n}" is named like a column of the dataset (or of the answer): rename it to pass it through`);
  }
  if (!seen.has('at')) throw missingCell(rowForMissing, 'at');
  for (const k of schema.seriesKey) if (!seen.has(k)) throw missingCell(rowForMissing, k);
}
