import { dropped } from './collect-garbage.js';
import { stringsOf } from './chunked-table.js';
import type { DatasetSchema } from './dataset-schema.js';
import { PartWriter } from './part-writer.js';
import { orderWithinSeries, type Restamp } from './series-order.js';
import { SeriesRows, type Collected, type Source } from './series-rows.js';
import { unifyStrings } from './unified-strings.js';
import { columnIndex, type VersionTable } from './version-table.js';

export type { Source } from './series-rows.js';

/** `--part-bytes` unless told otherwise: parts small enough to fetch and check a few at once (contract 14). */
export const DEFAULT_PART_BYTES = 512 * 2 ** 20;

/** Takes each part as it is written (and may write it away before the next is made); `last` is true of the last part. */
export type PartSink = (bytes: Uint8Array, rows: number, last: boolean) => Promise<void>;

/** str_ingested_at rewritten by a --rebuild: rows of the first source (by row) flagged 1 get `us`. */
export interface IngestedRewrite {
  readonly rows: Uint8Array;
  readonly us: number;
}

/**
 * The rows of the sources as Arrow IPC files in the dataset's schema: same columns in the
 * same order, same types and units, same schema metadata (series key included). Rows are
 * written in the order the server keeps them (series by key values as UTF-8 bytes, date,
 * str_observed_at, str_ingested_at, then position: series-order.ts), so that loading them
 * needs no sort; rows tying on every term stay in source order. `ingested` replaces
 * str_ingested_at of the first source's rows it flags.
 *
 * The output is cut into parts of at most `partBytes` (contract 14) between two series, never
 * inside one: a series larger than that is a part of its own. Parts come in series order, as
 * the server requires, and go to `sink` one at a time. At least one part, however few rows.
 * Each part is gathered, ordered and written on its own (series-rows.ts): what is held at
 * once beyond the sources' columns is one part (docs/decisions.md#publish-in-bounded-memory).
 */
export async function buildSnapshotParts(
  schema: DatasetSchema,
  sources: readonly Source[],
  ingested: IngestedRewrite | null,
  partBytes: number,
  sink: PartSink,
): Promise<void> {
  for (const s of sources) if (s.table.schema !== schema) throw new Error('buildSnapshot: every source must be in the dataset schema');
  const rows = new SeriesRows(sources, schema.seriesKey);
  const strings = schema.columns.map((d) =>
    d.type === 'utf8' || d.type === 'dict-utf8' ? unifyStrings(sources.map((s) => stringsOf(s.table, d.name))) : null,
  );
  const writer = new PartWriter(schema, rows.chunks, rows.chunkSource, strings);
  const by = {
    date: columnIndex(schema, 'date'),
    observed: columnIndex(schema, 'str_observed_at'),
    ingested: columnIndex(schema, 'str_ingested_at'),
  };

  // The series present, in order, and their rows.
  const present: number[] = [];
  for (let r = 0; r < rows.counts.length; r++) if (rows.counts[r]! > 0) present.push(r);
  const write = (s0: number, s1: number): { bytes: Uint8Array; rows: number } => {
    const c = s1 > s0 ? rows.collect(present[s0]!, present[s1 - 1]! + 1) : rows.collect(0, 0);
    const restamp = restampOf(c, rows, ingested);
    orderWithinSeries(c, rows.chunks, { date: by.date, stamps: { observed: by.observed, ingested: by.ingested, restamp } });
    return { bytes: writer.write(c, restamp), rows: c.rows };
  };

  // Greedy by an estimate, then checked on the bytes: a range over the limit holding more
  // than one series is cut in two at a series boundary and each half written again.
  const perRow = estimateRowBytes(sources[0]?.table.chunks ?? [], schema);
  const emit = async (s0: number, s1: number): Promise<void> => {
    const part = write(s0, s1);
    if (part.bytes.byteLength <= partBytes || s1 - s0 <= 1) {
      await sink(part.bytes, part.rows, s1 === present.length);
      // Its columns and its bytes are dropped now (collect-garbage.ts).
      dropped(2 * part.bytes.byteLength);
      return;
    }
    const mid = (s0 + s1) >> 1;
    await emit(s0, mid);
    await emit(mid, s1);
  };
  let first = 0;
  let size = 0;
  for (let s = 0; s < present.length; s++) {
    const add = rows.counts[present[s]!]! * perRow;
    if (s > first && size + add > partBytes) {
      await emit(first, s);
      first = s;
      size = 0;
    }
    size += add;
  }
  if (present.length === 0) {
    const part = write(0, 0);
    await sink(part.bytes, 0, true);
  } else await emit(first, present.length);
}

/** The collected rows of the first source that `ingested` flags. */
function restampOf(c: Collected, rows: SeriesRows, ingested: IngestedRewrite | null): Restamp | null {
  if (ingested === null) return null;
  const flags = new Uint8Array(c.rows);
  for (let j = 0; j < c.rows; j++) {
    const k = c.chunkOf[j]!;
    if (rows.chunkSource[k] === 0 && ingested.rows[rows.chunkFirst[k]! + c.rowOf[j]!] === 1) flags[j] = 1;
  }
  return { rows: flags, us: ingested.us };
}

/** Arrow bytes of one row, roughly (fixed widths, validity, string offsets and the mean string length of the first rows). */
function estimateRowBytes(chunks: readonly VersionTable[], schema: DatasetSchema): number {
  let bytes = 0;
  schema.columns.forEach((def, c) => {
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
        let len = 0;
        let sample = 0;
        for (const chunk of chunks) {
          const col = chunk.columns[c]!;
          if (col.kind !== 'string') break;
          for (let i = 0; i < chunk.rows && sample < 4096; i++, sample++) len += Buffer.byteLength(col.strings[col.codes[i]!] ?? '', 'utf8');
          if (sample === 4096) break;
        }
        if (sample > 0) bytes += len / sample;
        break;
      }
      default:
        bytes += 8;
    }
  });
  return bytes;
}
