import type { DatasetSchema } from './dataset-schema.js';
import { PartWriter } from './part-writer.js';
import { physicalOrder, type IngestedRewrite, type Segment } from './physical-order.js';
import { segmentRows } from './segment-columns.js';
import { columnOf, type VersionTable } from './version-table.js';

export type { Segment } from './physical-order.js';

/** `--part-bytes` unless told otherwise: parts small enough to fetch and check a few at once (contract 14). */
export const DEFAULT_PART_BYTES = 512 * 2 ** 20;

/** Takes each part as it is written (and may write it away before the next is made). */
export type PartSink = (bytes: Uint8Array, rows: number) => Promise<void>;

/**
 * The rows of the segments as Arrow IPC files in the dataset's schema: same columns in the
 * same order, same types and units, same schema metadata (series key included). Rows are
 * written in the order the server keeps them (physical-order.ts), so that loading them
 * needs no sort; rows tying on every term stay in segment order. `ingested` replaces
 * str_ingested_at of the rows it flags (by their index in the segments, one after the other).
 *
 * The output is cut into parts of at most `partBytes` (contract 14) between two series, never
 * inside one: a series larger than that is a part of its own. Parts come in series order, as
 * the server requires, and go to `sink` one at a time. At least one part, however few rows.
 */
export async function buildSnapshotParts(
  schema: DatasetSchema,
  segments: readonly Segment[],
  ingested: IngestedRewrite | null,
  partBytes: number,
  sink: PartSink,
): Promise<void> {
  for (const seg of segments) if (seg.table.schema !== schema) throw new Error('buildSnapshot: every segment must be in the dataset schema');
  const total = segments.reduce((n, s) => n + segmentRows(s), 0);
  const { perm, keys } = physicalOrder(segments, schema.seriesKey, ingested);
  const from = (i: number): number => (perm === null ? i : perm[i]!);
  const writer = new PartWriter(schema, segments, ingested);
  const write = (start: number, end: number): Uint8Array => writer.write(from, start, end);

  // Series starts in output order: a row whose key codes differ from the row before.
  const starts: number[] = [];
  for (let i = 0; i < total; i++) {
    if (i === 0) starts.push(0);
    else {
      const a = from(i);
      const b = from(i - 1);
      for (const k of keys) {
        if (k.codes[a] !== k.codes[b]) {
          starts.push(i);
          break;
        }
      }
    }
  }
  starts.push(total);

  // Greedy by an estimate, then checked on the bytes: a range over the limit holding more
  // than one series is cut in two at a series boundary and each half written again.
  const perRow = estimateRowBytes(segments[0]?.table ?? null, schema);
  const emit = async (s0: number, s1: number): Promise<void> => {
    const bytes = write(starts[s0]!, starts[s1]!);
    if (bytes.byteLength <= partBytes || s1 - s0 <= 1) {
      await sink(bytes, starts[s1]! - starts[s0]!);
      return;
    }
    const mid = (s0 + s1) >> 1;
    await emit(s0, mid);
    await emit(mid, s1);
  };
  let first = 0;
  let size = 0;
  for (let s = 0; s < starts.length - 1; s++) {
    const rows = starts[s + 1]! - starts[s]!;
    const add = rows * perRow;
    if (s > first && size + add > partBytes) {
      await emit(first, s);
      first = s;
      size = 0;
    }
    size += add;
  }
  if (starts.length === 1) await sink(write(0, 0), 0);
  else await emit(first, starts.length - 1);
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
