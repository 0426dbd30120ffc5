import type { ByteWriter } from '../bytes/byte-writer.js';
import type { Column } from '../../store/column.js';
import type { OutputColumn } from '../page-view.js';
import { FlatWriter } from './flat-writer.js';
import { writePassthroughField } from './passthrough-schema.js';

// Arrow's Message.fbs / Schema.fbs enum values and field ids, as apache-arrow's generated
// code (apache-arrow/fb/*) has them.
const METADATA_V5 = 4;
const HEADER_SCHEMA = 1;
const TYPE = { Int: 2, FloatingPoint: 3, Utf8: 5, Bool: 6, Date: 8, Timestamp: 10 } as const;
const PRECISION_SINGLE = 1;
const PRECISION_DOUBLE = 2;
const DATE_DAY = 0;
const TIME_UNIT = { s: 0, ms: 1, us: 2 } as const;

/**
 * The Arrow schema message of one output layout (contract 9), encoded once: the fields and
 * every metadata entry but the last one's value, which is written per answer. pitcache's
 * last entry is `pitcache.envelope` (record id, retrieved_at: per request), so an answer
 * copies this prefix and writes only its envelope, instead of encoding a schema with
 * apache-arrow per answer (about 50 µs, most of a small answer's cost).
 *
 * The flatbuffer is written front to back (flat-writer.ts) with the last value's string at
 * its very end: nothing references past that string's start, so its length is free.
 */
export class SchemaMessage {
  /** the flatbuffer up to the last value's string (its length word comes next) */
  private readonly prefix: Uint8Array;

  constructor(
    columns: readonly OutputColumn[],
    metadata: ReadonlyArray<readonly [string, string]>,
    /** the key of the entry whose value each answer writes, or null for none */
    readonly lastKey: string | null,
  ) {
    this.prefix = encodePrefix(columns, metadata, lastKey);
  }

  /**
   * The whole message (continuation marker, length, flatbuffer, padding to 8) at `out`'s
   * end, which must be 8-aligned within the stream. `writeLast` writes the last value's
   * UTF-8 bytes (ignored without a lastKey).
   */
  write(out: ByteWriter, writeLast: ((out: ByteWriter) => void) | null): void {
    const start = out.pos;
    out.ensure(8 + this.prefix.byteLength + 4);
    out.buf.writeInt32LE(-1, start);
    out.pos = start + 8;
    out.bytes(this.prefix);
    if (this.lastKey !== null) {
      const lengthAt = out.pos;
      out.pos += 4;
      writeLast?.(out);
      out.buf.writeUint32LE(out.pos - lengthAt - 4, lengthAt);
      out.ensure(1);
      out.buf[out.pos++] = 0;
    }
    const end = start + ((out.pos - start + 7) & ~7);
    out.ensure(end - out.pos);
    out.buf.fill(0, out.pos, end);
    out.pos = end;
    out.buf.writeInt32LE(end - start - 8, start + 4);
  }
}

function encodePrefix(columns: readonly OutputColumn[], metadata: ReadonlyArray<readonly [string, string]>, lastKey: string | null): Uint8Array {
  const w = new FlatWriter();
  const root = w.slot();
  const [, , header] = w.table(
    [
      { id: 0, kind: 'i16', value: METADATA_V5 },
      { id: 1, kind: 'u8', value: HEADER_SCHEMA },
      { id: 2, kind: 'ref' },
    ],
    root,
  );
  const [, fieldsRef, metaRef] = w.table(
    [
      { id: 0, kind: 'i16', value: 0 }, // little-endian
      { id: 1, kind: 'ref' },
      { id: 2, kind: 'ref' },
    ],
    header!,
  );
  w.point(fieldsRef!);
  const fieldSlots = w.refVector(columns.length);
  // A passthrough's dictionary has its column's index as id (ipc-stream.ts writes it so).
  columns.forEach((c, i) =>
    c.arrow === undefined ? writeField(w, c.column, fieldSlots[i]!) : writePassthroughField(w, c.column.name, c.arrow, i, fieldSlots[i]!),
  );
  const entries = lastKey === null ? metadata : [...metadata, [lastKey, ''] as const];
  w.point(metaRef!);
  const entrySlots = w.refVector(entries.length);
  entries.forEach(([key, value], i) => {
    const [keyRef, valueRef] = w.table(
      [
        { id: 0, kind: 'ref' },
        { id: 1, kind: 'ref' },
      ],
      entrySlots[i]!,
    );
    w.point(keyRef!);
    w.string(key);
    w.point(valueRef!);
    // The last value is written per answer: the prefix stops at its (4-aligned) start.
    if (lastKey === null || i < entries.length - 1) w.string(value);
  });
  return w.bytes();
}

function writeField(w: FlatWriter, c: Column, from: number): void {
  const [name, , , type, children] = w.table(
    [
      { id: 0, kind: 'ref' },
      { id: 1, kind: 'u8', value: 1 }, // nullable
      { id: 2, kind: 'u8', value: typeId(c) },
      { id: 3, kind: 'ref' },
      { id: 5, kind: 'ref' },
    ],
    from,
  );
  w.point(name!);
  w.string(c.name);
  writeType(w, c, type!);
  // Readers (Arrow C++, polars) require the children vector, even empty.
  w.point(children!);
  w.refVector(0);
}

function typeId(c: Column): number {
  switch (c.kind) {
    case 'float':
      return TYPE.FloatingPoint;
    case 'int':
    case 'int64':
      return TYPE.Int;
    case 'bool':
      return TYPE.Bool;
    case 'string':
      return TYPE.Utf8;
    case 'date32':
      return TYPE.Date;
    case 'timestamp':
      return TYPE.Timestamp;
  }
}

function writeType(w: FlatWriter, c: Column, from: number): void {
  switch (c.kind) {
    case 'float':
      w.table([{ id: 0, kind: 'i16', value: c.values instanceof Float32Array ? PRECISION_SINGLE : PRECISION_DOUBLE }], from);
      return;
    case 'int': {
      const v = c.values;
      const signed = v instanceof Int8Array || v instanceof Int16Array || v instanceof Int32Array;
      w.table(
        [
          { id: 0, kind: 'i32', value: v.BYTES_PER_ELEMENT * 8 },
          { id: 1, kind: 'u8', value: signed ? 1 : 0 },
        ],
        from,
      );
      return;
    }
    case 'int64':
      w.table(
        [
          { id: 0, kind: 'i32', value: 64 },
          { id: 1, kind: 'u8', value: 1 },
        ],
        from,
      );
      return;
    case 'bool':
    case 'string':
      w.table([], from);
      return;
    case 'date32':
      w.table([{ id: 0, kind: 'i16', value: DATE_DAY }], from);
      return;
    case 'timestamp': {
      const [, zone] = w.table(
        [
          { id: 0, kind: 'i16', value: TIME_UNIT[c.unit] },
          { id: 1, kind: 'ref' },
        ],
        from,
      );
      w.point(zone!);
      w.string('UTC');
      return;
    }
  }
}
