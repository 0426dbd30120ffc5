/**
 * The record-batch header pitcache writes itself (src/format/arrow/batch-header.ts), read as
 * documentation of what it generates:
 *
 *   0xFFFFFFFF | metadata length | flatbuffer: Message{V5, RecordBatch{length,
 *   nodes: [FieldNode{length, null_count}], buffers: [Buffer{offset, length}]}, bodyLength} | padding to 8
 *
 * encoded once per layout with zeros for the numbers; an answer fills them in at fixed
 * places while it writes the body. apache-arrow decodes what it holds.
 */
import { Message, MessageHeader, type RecordBatch } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { BatchHeader } from '../src/format/arrow/batch-header.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';

interface Decoded {
  nodes: Array<{ length: number; nullCount: number }>;
  buffers: Array<{ offset: number; length: number }>;
  length: number;
}

function decode(bytes: Uint8Array): { type: MessageHeader; bodyLength: number; batch: Decoded } {
  const m = Message.decode(bytes.subarray(8));
  const h = m.header() as unknown as RecordBatch & Decoded;
  return {
    type: m.headerType,
    bodyLength: Number(m.bodyLength),
    batch: {
      length: Number(h.length),
      nodes: h.nodes.map((n) => ({ length: Number(n.length), nullCount: Number(n.nullCount) })),
      buffers: h.buffers.map((b) => ({ offset: Number(b.offset), length: Number(b.length) })),
    },
  };
}

describe('BatchHeader', () => {
  it('is one framed message, a multiple of 8 bytes, whose numbers are filled in after it is written', () => {
    const h = new BatchHeader(2, 5);
    const w = new ByteWriter(16);
    w.pos = 8; // where a schema message would end
    const at = h.write(w, 7);
    expect(at).toBe(8);
    expect(w.pos).toBe(8 + h.size);
    expect(h.size % 8).toBe(0);
    const framed = w.view().subarray(at);
    expect(Buffer.from(framed).readInt32LE(0)).toBe(-1);
    expect(Buffer.from(framed).readInt32LE(4)).toBe(h.size - 8);
    // Before the answer's numbers: the row count only.
    expect(decode(framed)).toEqual({
      type: MessageHeader.RecordBatch,
      bodyLength: 0,
      batch: {
        length: 7,
        nodes: [
          { length: 0, nullCount: 0 },
          { length: 0, nullCount: 0 },
        ],
        buffers: Array(5).fill({ offset: 0, length: 0 }),
      },
    });
    h.node(w.buf, at, 0, 7, 3);
    h.node(w.buf, at, 1, 7, 0);
    [8, 32, 0, 32, 40].forEach((length, i, all) =>
      h.buffer(
        w.buf,
        at,
        i,
        all.slice(0, i).reduce((a, b) => a + ((b + 7) & ~7), 0),
        length,
      ),
    );
    h.finish(w.buf, at, 112);
    expect(decode(w.view().subarray(at))).toEqual({
      type: MessageHeader.RecordBatch,
      bodyLength: 112,
      batch: {
        length: 7,
        nodes: [
          { length: 7, nullCount: 3 },
          { length: 7, nullCount: 0 },
        ],
        buffers: [
          { offset: 0, length: 8 },
          { offset: 8, length: 32 },
          { offset: 40, length: 0 },
          { offset: 40, length: 32 },
          { offset: 72, length: 40 },
        ],
      },
    });
  });

  it('numbers past 32 bits are written as int64 (a file-channel answer of billions of bytes)', () => {
    const h = new BatchHeader(1, 2);
    const w = new ByteWriter(16);
    const at = h.write(w, 2 ** 33 + 5);
    h.node(w.buf, at, 0, 2 ** 33 + 5, 2 ** 32);
    h.buffer(w.buf, at, 1, 2 ** 40 + 8, 2 ** 35);
    h.finish(w.buf, at, 2 ** 52);
    const d = decode(w.view());
    expect(d.bodyLength).toBe(2 ** 52);
    expect(d.batch.length).toBe(2 ** 33 + 5);
    expect(d.batch.nodes[0]).toEqual({ length: 2 ** 33 + 5, nullCount: 2 ** 32 });
    expect(d.batch.buffers[1]).toEqual({ offset: 2 ** 40 + 8, length: 2 ** 35 });
  });

  it('each header is independent: writing a second one at another place leaves the first as it was', () => {
    const h = new BatchHeader(1, 2);
    const w = new ByteWriter(16);
    const first = h.write(w, 3);
    h.buffer(w.buf, first, 1, 0, 24);
    h.finish(w.buf, first, 24);
    const second = h.write(w, 9);
    h.finish(w.buf, second, 72);
    expect(decode(w.view().subarray(first, second)).bodyLength).toBe(24);
    expect(decode(w.view().subarray(first, second)).batch.buffers[1]).toEqual({ offset: 0, length: 24 });
    expect(decode(w.view().subarray(second)).batch.length).toBe(9);
  });
});
