import type { OutputColumn } from '../format/page-view.js';
import type { BoolColumn, Column, IntArray } from '../store/column.js';
import type { JoinResult } from './asof-join.js';
import type { EventBatch } from './event-batch.js';

/**
 * The columns of a join's answer (contract 15), in order: the events' own columns as
 * given, then the dataset's columns other than its series key (`stored`: every column or
 * a projection), each gathered at the row answering each event (null where none), then
 * `floor_applied` (contract 16). Every column is computed for this answer and read at the
 * output position, so the format writers (json, csv, arrow) write it as any other page.
 */
export function joinColumns(events: EventBatch, stored: readonly Column[], seriesKey: readonly string[], join: JoinResult): OutputColumn[] {
  const out: OutputColumn[] = events.columns.map((column, i) => {
    const arrow = events.arrow?.[i];
    return arrow === undefined ? { column, at: 'position' } : { column, at: 'position', arrow };
  });
  for (const c of stored) if (!seriesKey.includes(c.name)) out.push({ column: gather(c, join.rows), at: 'position' });
  const floorApplied: BoolColumn = { kind: 'bool', name: 'floor_applied', values: join.floorApplied, validity: null };
  out.push({ column: floorApplied, at: 'position' });
  return out;
}

/** Column `c` at each row of `rows` (-1: null), as a column of its own kind. */
export function gather(c: Column, rows: Int32Array): Column {
  const n = rows.length;
  const validity = new Uint8Array(n);
  const src = c.validity;
  for (let i = 0; i < n; i++) {
    const r = rows[i]!;
    validity[i] = r < 0 ? 0 : src === null ? 1 : src[r]!;
  }
  switch (c.kind) {
    case 'string': {
      const codes = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const r = rows[i]!;
        if (r >= 0) codes[i] = c.codes[r]!;
      }
      return { kind: 'string', name: c.name, codes, dict: c.dict, validity };
    }
    case 'timestamp':
      return { kind: 'timestamp', name: c.name, unit: c.unit, values: pick(c.values, new Float64Array(n), rows), validity };
    case 'float':
      return {
        kind: 'float',
        name: c.name,
        values: pick(c.values, c.values instanceof Float32Array ? new Float32Array(n) : new Float64Array(n), rows),
        validity,
      };
    case 'int': {
      const Ctor = c.values.constructor as new (n: number) => IntArray;
      return { kind: 'int', name: c.name, values: pick(c.values, new Ctor(n), rows), validity };
    }
    case 'int64':
      return { kind: 'int64', name: c.name, values: pick(c.values, new BigInt64Array(n), rows), validity };
    case 'bool':
      return { kind: 'bool', name: c.name, values: pick(c.values, new Uint8Array(n), rows), validity };
    case 'date32':
      return { kind: 'date32', name: c.name, values: pick(c.values, new Int32Array(n), rows), validity };
  }
}

type Indexed<T> = { [i: number]: T; readonly length: number };

function pick<T, A extends Indexed<T>>(src: Indexed<T>, dst: A, rows: Int32Array): A {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    if (r >= 0) dst[i] = src[r]!;
  }
  return dst;
}
