/**
 * Arrow IPC bytes assembled by hand around one column under test, for layouts this
 * repository's own writer never produces (garbage in null slots, invalid UTF-8, ...).
 */
import type { Field, Vector } from 'apache-arrow';
import { DateDay, Schema, Table as ArrowTable, TimestampMicrosecond, Utf8, makeData, makeVector, tableToIPC, vectorFromArray } from 'apache-arrow';

/** A one-series snapshot (series key `[]`) of n rows: the required columns, then `name`. */
export function snapshotWithColumn(name: string, column: Vector, observedUs = 1_775_001_600_000_000n): Uint8Array {
  const n = column.length;
  // One buffer per column: arrow's IPC writer mixes up vectors that share one.
  const ts = () => makeVector(makeData({ type: new TimestampMicrosecond('UTC'), data: new BigInt64Array(n).fill(observedUs), length: n }));
  const table = new ArrowTable({
    date: makeVector(makeData({ type: new DateDay(), data: Int32Array.from({ length: n }, (_, i) => 20_000 + i), length: n })),
    str_effective_at: ts(),
    str_observed_at: ts(),
    str_ingested_at: ts(),
    model_version: vectorFromArray(
      Array.from({ length: n }, () => '1.0'),
      new Utf8(),
    ),
    [name]: column,
  });
  const withKey = new ArrowTable(new Schema(table.schema.fields as Field[], new Map([['pitcache.series_key', '[]']])), table.batches);
  return tableToIPC(withKey, 'file');
}
