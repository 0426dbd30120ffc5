import type { ArrowArray } from '../arrow-passthrough.js';
import type { ByteWriter } from '../bytes/byte-writer.js';
import { FlatWriter } from './flat-writer.js';

const METADATA_V5 = 4;
const HEADER_DICTIONARY_BATCH = 2;
/** FieldNode {length, null_count} and Buffer {offset, length}: two int64 each */
const STRUCT = 16;

const pad8 = (n: number): number => (n + 7) & ~7;

/**
 * A dictionary batch (Message.fbs: DictionaryBatch{id, data: RecordBatch, isDelta false})
 * holding a passthrough column's dictionary values (format/arrow-passthrough.ts), framed and
 * written at `out`'s end, which is 8-aligned in the stream: the message header, then the
 * values' buffers each padded to 8. Every buffer's length is known before, so the header is
 * encoded whole here: one per dictionary column per answer, a few hundred bytes.
 */
export function writeDictionaryBatch(out: ByteWriter, id: number, values: ArrowArray): void {
  const w = new FlatWriter();
  const root = w.slot();
  let bodyLength = 0;
  for (const b of values.buffers) bodyLength += pad8(b.byteLength);
  const [, , header] = w.table(
    [
      { id: 0, kind: 'i16', value: METADATA_V5 },
      { id: 1, kind: 'u8', value: HEADER_DICTIONARY_BATCH },
      { id: 2, kind: 'ref' },
      { id: 3, kind: 'i64', value: bodyLength },
    ],
    root,
  );
  const [, data] = w.table(
    [
      { id: 0, kind: 'i64', value: id },
      { id: 1, kind: 'ref' },
      { id: 2, kind: 'u8', value: 0 },
    ],
    header!,
  );
  const [, nodesRef, buffersRef] = w.table(
    [
      { id: 0, kind: 'i64', value: values.length },
      { id: 1, kind: 'ref' },
      { id: 2, kind: 'ref' },
    ],
    data!,
  );
  const nodesAt = w.structVector(1, STRUCT, nodesRef!);
  const buffersAt = w.structVector(values.buffers.length, STRUCT, buffersRef!);
  w.align(8);
  const flat = w.bytes();
  const dv = new DataView(flat.buffer, flat.byteOffset, flat.byteLength);
  dv.setBigInt64(nodesAt, BigInt(values.length), true);
  dv.setBigInt64(nodesAt + 8, BigInt(values.nullCount), true);
  let offset = 0;
  values.buffers.forEach((b, i) => {
    dv.setBigInt64(buffersAt + i * STRUCT, BigInt(offset), true);
    dv.setBigInt64(buffersAt + i * STRUCT + 8, BigInt(b.byteLength), true);
    offset += pad8(b.byteLength);
  });
  out.ensure(8 + flat.byteLength + bodyLength);
  out.buf.writeInt32LE(-1, out.pos);
  out.buf.writeInt32LE(flat.byteLength, out.pos + 4);
  out.buf.set(flat, out.pos + 8);
  out.pos += 8 + flat.byteLength;
  for (const b of values.buffers) {
    out.buf.set(b, out.pos);
    out.buf.fill(0, out.pos + b.byteLength, out.pos + pad8(b.byteLength));
    out.pos += pad8(b.byteLength);
  }
}
