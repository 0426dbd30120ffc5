import { buildArrowSnapshot, type ColumnSpec } from '../snapshot/arrow-writer.js';
import { unitScale, type DatasetSchema } from './dataset-schema.js';
import { physicalOrder, type Segment } from './physical-order.js';
import { cellValue } from './version-table.js';

export type { Segment } from './physical-order.js';

/**
 * The rows of the segments as an Arrow IPC file in the dataset's schema: same columns in the
 * same order, same types and units, same schema metadata (series key included). Rows are
 * written in the order the server keeps them (physical-order.ts), so that loading them
 * needs no sort; rows tying on every term stay in segment order. `ingested` replaces
 * str_ingested_at (µs) of rows by their index in the segments, one after the other.
 */
export function buildSnapshot(schema: DatasetSchema, segments: readonly Segment[], ingested: ReadonlyMap<number, number> = new Map()): Uint8Array {
  for (const seg of segments) if (seg.table.schema !== schema) throw new Error('buildSnapshot: every segment must be in the dataset schema');
  const total = segments.reduce((n, s) => n + (s.rows?.length ?? s.table.rows), 0);
  // Where row o of the segments, one after the other, comes from.
  const segOf = new Int32Array(total);
  const rowOf = new Int32Array(total);
  let o = 0;
  segments.forEach((seg, k) => {
    const count = seg.rows?.length ?? seg.table.rows;
    for (let i = 0; i < count; i++, o++) {
      segOf[o] = k;
      rowOf[o] = seg.rows === null ? i : seg.rows[i]!;
    }
  });
  const order = physicalOrder(segments, schema.seriesKey, ingested);
  const columns = schema.columns.map((def, c): ColumnSpec => {
    const scale = def.unit === null ? 1 : unitScale(def.unit);
    const rewrites = def.name === 'str_ingested_at' ? ingested : null;
    const values: unknown[] = new Array(total);
    for (let i = 0; i < total; i++) {
      const from = order === null ? i : order[i]!;
      const rewritten = rewrites?.get(from);
      const v = rewritten ?? cellValue(segments[segOf[from]!]!.table.columns[c]!, rowOf[from]!);
      values[i] = def.type === 'timestamp' && v !== null ? (v as number) / scale : v;
    }
    return { name: def.name, type: def.type, unit: def.unit ?? undefined, values } as ColumnSpec;
  });
  const metadata = Object.fromEntries(schema.metadata);
  return buildArrowSnapshot({ columns, seriesKey: [...schema.seriesKey], metadata }, 'file');
}
