import { buildArrowSnapshot, type ColumnSpec } from '../snapshot/arrow-writer.js';
import { unitScale, type DatasetSchema } from './dataset-schema.js';
import { cellValue, type VersionTable } from './version-table.js';

/** Some rows of a table (all of them when `rows` is null), in that order. */
export interface Segment {
  readonly table: VersionTable;
  readonly rows: Int32Array | null;
}

/**
 * The rows of the segments, one after the other, as an Arrow IPC file in the dataset's
 * schema: same columns in the same order, same types and units, same schema metadata
 * (series key included). `ingested` replaces str_ingested_at (µs) of output rows by index.
 */
export function buildSnapshot(schema: DatasetSchema, segments: readonly Segment[], ingested: ReadonlyMap<number, number> = new Map()): Uint8Array {
  const total = segments.reduce((n, s) => n + (s.rows?.length ?? s.table.rows), 0);
  const columns = schema.columns.map((def, c): ColumnSpec => {
    const scale = def.unit === null ? 1 : unitScale(def.unit);
    const values: unknown[] = new Array(total);
    let o = 0;
    for (const seg of segments) {
      if (seg.table.schema !== schema) throw new Error('buildSnapshot: every segment must be in the dataset schema');
      const col = seg.table.columns[c]!;
      const count = seg.rows?.length ?? seg.table.rows;
      for (let i = 0; i < count; i++) {
        const v = cellValue(col, seg.rows === null ? i : seg.rows[i]!);
        values[o++] = def.type === 'timestamp' && v !== null ? (v as number) / scale : v;
      }
    }
    if (def.name === 'str_ingested_at') for (const [row, us] of ingested) values[row] = us / scale;
    return { name: def.name, type: def.type, unit: def.unit ?? undefined, values } as ColumnSpec;
  });
  const metadata = Object.fromEntries(schema.metadata);
  return buildArrowSnapshot({ columns, seriesKey: [...schema.seriesKey], metadata }, 'file');
}
