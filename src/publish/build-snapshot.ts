import { buildArrowSnapshot, type ColumnSpec } from '../snapshot/arrow-writer.js';
import { unitScale, type DatasetSchema } from './dataset-schema.js';
import { physicalOrder, type Segment } from './physical-order.js';
import { cellValue, columnOf, type VersionTable } from './version-table.js';

export type { Segment } from './physical-order.js';

/** `--part-bytes` unless told otherwise: parts small enough to fetch and check a few at once (contract 14). */
export const DEFAULT_PART_BYTES = 512 * 2 ** 20;

/**
 * The rows of the segments as Arrow IPC files in the dataset's schema: same columns in the
 * same order, same types and units, same schema metadata (series key included). Rows are
 * written in the order the server keeps them (physical-order.ts), so that loading them
 * needs no sort; rows tying on every term stay in segment order. `ingested` replaces
 * str_ingested_at (µs) of rows by their index in the segments, one after the other.
 *
 * The output is cut into parts of at most `partBytes` (contract 14) between two series, never
 * inside one: a series larger than that is a part of its own. Parts come in series order, as
 * the server requires. At least one part, however few rows.
 */
export function buildSnapshotParts(
  schema: DatasetSchema,
  segments: readonly Segment[],
  ingested: ReadonlyMap<number, number> = new Map(),
  partBytes = DEFAULT_PART_BYTES,
): Uint8Array[] {
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
  const from = (i: number): number => (order === null ? i : order[i]!);
  const cell = (c: number, i: number): unknown => {
    const at = from(i);
    const rewritten = schema.columns[c]!.name === 'str_ingested_at' ? ingested.get(at) : undefined;
    return rewritten ?? cellValue(segments[segOf[at]!]!.table.columns[c]!, rowOf[at]!);
  };
  const write = (start: number, end: number): Uint8Array => {
    const columns = schema.columns.map((def, c): ColumnSpec => {
      const scale = def.unit === null ? 1 : unitScale(def.unit);
      const values: unknown[] = new Array(end - start);
      for (let i = start; i < end; i++) {
        const v = cell(c, i);
        values[i - start] = def.type === 'timestamp' && v !== null ? (v as number) / scale : v;
      }
      return { name: def.name, type: def.type, unit: def.unit ?? undefined, values } as ColumnSpec;
    });
    const metadata = Object.fromEntries(schema.metadata);
    return buildArrowSnapshot({ columns, seriesKey: [...schema.seriesKey], metadata }, 'file');
  };

  // Series starts in output order: a row whose key values differ from the row before.
  const keyCols = schema.seriesKey.map((name) => schema.columns.findIndex((c) => c.name === name));
  const starts: number[] = [];
  for (let i = 0; i < total; i++) if (i === 0 || keyCols.some((c) => cell(c, i) !== cell(c, i - 1))) starts.push(i);
  starts.push(total);

  const parts: Uint8Array[] = [];
  // Greedy by an estimate, then checked on the bytes: a range over the limit holding more
  // than one series is cut in two at a series boundary and each half written again.
  const perRow = estimateRowBytes(segments[0]?.table ?? null, schema);
  const emit = (s0: number, s1: number): void => {
    const bytes = write(starts[s0]!, starts[s1]!);
    if (bytes.byteLength <= partBytes || s1 - s0 <= 1) {
      parts.push(bytes);
      return;
    }
    const mid = (s0 + s1) >> 1;
    emit(s0, mid);
    emit(mid, s1);
  };
  let first = 0;
  let size = 0;
  for (let s = 0; s < starts.length - 1; s++) {
    const rows = starts[s + 1]! - starts[s]!;
    const add = rows * perRow;
    if (s > first && size + add > partBytes) {
      emit(first, s);
      first = s;
      size = 0;
    }
    size += add;
  }
  if (starts.length === 1) parts.push(write(0, 0));
  else emit(first, starts.length - 1);
  return parts;
}

/** Arrow bytes of one row, roughly (fixed widths, validity, string offsets and the mean string length). */
function estimateRowBytes(table: VersionTable | null, schema: DatasetSchema): number {
  let bytes = 0;
  for (const def of schema.columns) {
    bytes += 0.125;
    switch (def.type) {
      case 'bool':
        bytes += 0.125;
        break;
      case 'int8':
      case 'uint8':
        bytes += 1;
        break;
      case 'int16':
      case 'uint16':
        bytes += 2;
        break;
      case 'date32':
      case 'int32':
      case 'uint32':
      case 'float32':
        bytes += 4;
        break;
      case 'utf8':
      case 'dict-utf8': {
        bytes += 4;
        if (table !== null && table.rows > 0) {
          const c = columnOf(table, def.name);
          if (c.kind === 'string') {
            let len = 0;
            const sample = Math.min(table.rows, 4096);
            for (let i = 0; i < sample; i++) len += Buffer.byteLength(c.strings[c.codes[i]!] ?? '', 'utf8');
            bytes += len / sample;
          }
        }
        break;
      }
      default:
        bytes += 8;
    }
  }
  return bytes;
}
