import type { ByteWriter } from '../bytes/byte-writer.js';
import { FlatWriter } from './flat-writer.js';

const METADATA_V5 = 4;
const HEADER_RECORD_BATCH = 3;
/** FieldNode {length, null_count} and Buffer {offset, length}: two int64 each */
const STRUCT = 16;

/**
 * The record-batch message header of one layout (its number of field nodes and buffers),
 * encoded once with zeros where an answer's numbers go:
 *
 *   0xFFFFFFFF | metadata length | flatbuffer: Message{V5, RecordBatch{length, nodes: [FieldNode],
 *   buffers: [Buffer]}, bodyLength} | 0-padding to 8
 *
 * Every number is an int64 at a fixed place (fields and structs are never omitted), so an
 * answer copies the template, writes its body after it, and fills the numbers in as it
 * learns them (`node`, `buffer`, `finish`): the body is written in one pass, without
 * measuring it first and without objects per column.
 */
export class BatchHeader {
  private readonly bytes: Uint8Array;
  private readonly lengthAt: number;
  private readonly bodyLengthAt: number;
  private readonly nodesAt: number;
  private readonly buffersAt: number;

  constructor(
    readonly nodes: number,
    readonly buffers: number,
  ) {
    const w = new FlatWriter();
    const root = w.slot();
    const [, , header, bodyLength] = w.table(
      [
        { id: 0, kind: 'i16', value: METADATA_V5 },
        { id: 1, kind: 'u8', value: HEADER_RECORD_BATCH },
        { id: 2, kind: 'ref' },
        { id: 3, kind: 'i64', value: 0 },
      ],
      root,
    );
    const [length, nodesRef, buffersRef] = w.table(
      [
        { id: 0, kind: 'i64', value: 0 },
        { id: 1, kind: 'ref' },
        { id: 2, kind: 'ref' },
      ],
      header!,
    );
    const nodesAt = w.structVector(nodes, STRUCT, nodesRef!);
    const buffersAt = w.structVector(buffers, STRUCT, buffersRef!);
    w.align(8);
    const flat = w.bytes();
    this.bytes = flat;
    // Positions in the framed message: 8 bytes of continuation and length come first.
    this.bodyLengthAt = 8 + bodyLength!;
    this.lengthAt = 8 + length!;
    this.nodesAt = 8 + nodesAt;
    this.buffersAt = 8 + buffersAt;
  }

  /** The message's size, framing included (the body starts right after it). */
  get size(): number {
    return 8 + this.bytes.byteLength;
  }

  /** Writes the template at `out`'s end (8-aligned in the stream) for `rows` rows; returns where it starts. */
  write(out: ByteWriter, rows: number): number {
    const at = out.pos;
    out.ensure(this.size);
    out.buf.writeInt32LE(-1, at);
    out.buf.writeInt32LE(this.bytes.byteLength, at + 4);
    out.buf.set(this.bytes, at + 8);
    out.pos = at + this.size;
    putInt64(out.buf, at + this.lengthAt, rows);
    return at;
  }

  /** Field node i of the header written at `at`. */
  node(buf: Uint8Array, at: number, i: number, length: number, nullCount: number): void {
    putInt64(buf, at + this.nodesAt + i * STRUCT, length);
    putInt64(buf, at + this.nodesAt + i * STRUCT + 8, nullCount);
  }

  /** Buffer i (offset and length within the body) of the header written at `at`. */
  buffer(buf: Uint8Array, at: number, i: number, offset: number, length: number): void {
    putInt64(buf, at + this.buffersAt + i * STRUCT, offset);
    putInt64(buf, at + this.buffersAt + i * STRUCT + 8, length);
  }

  finish(buf: Uint8Array, at: number, bodyLength: number): void {
    putInt64(buf, at + this.bodyLengthAt, bodyLength);
  }
}

/** A non-negative integer below 2^53 as little-endian int64, without a BigInt. */
function putInt64(buf: Uint8Array, at: number, v: number): void {
  const hi = Math.floor(v / 4294967296);
  const lo = v - hi * 4294967296;
  buf[at] = lo & 0xff;
  buf[at + 1] = (lo >>> 8) & 0xff;
  buf[at + 2] = (lo >>> 16) & 0xff;
  buf[at + 3] = lo >>> 24;
  buf[at + 4] = hi & 0xff;
  buf[at + 5] = (hi >>> 8) & 0xff;
  buf[at + 6] = (hi >>> 16) & 0xff;
  buf[at + 7] = hi >>> 24;
}
