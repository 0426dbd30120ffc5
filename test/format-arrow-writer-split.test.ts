/**
 * ArrowFormatWriter's split (format-writer.ts): the schema message with this request's
 * envelope is the prefix, the record batch and end-of-stream marker the cacheable middle.
 * The middle does not depend on the stamp, prefix + middle is exactly the stream
 * writeArrowStream writes, any request's prefix can go in front of any middle of the same
 * (generation, request), and the shape the cache keeps holds no column data.
 */
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { ArrowFormatWriter } from '../src/format/arrow/arrow-writer.js';
import { arrowStreamBytes } from '../src/format/arrow/ipc-stream.js';
import { ArrowLayout } from '../src/format/arrow/arrow-layout.js';
import type { OutputColumn, PageView } from '../src/format/page-view.js';
import type { PageMeta, RequestStamp } from '../src/format/resolved-page.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import type { Column } from '../src/store/column.js';

const stored: Column[] = [
  { kind: 'date32', name: 'date', validity: null, values: Int32Array.of(20000, 20001, 20002, 20003) },
  { kind: 'float', name: 'value', validity: Uint8Array.of(1, 0, 1, 1), values: Float64Array.of(1.5, 0, -0, 1e300) },
];
const decision: Column = { kind: 'date32', name: 'decision_date', validity: null, values: Int32Array.of(19999, 20000, 20001) };
const columns: OutputColumn[] = [{ column: decision, at: 'position' }, ...stored.map((column): OutputColumn => ({ column, at: 'row' }))];
const view: PageView = { columns, rows: Int32Array.of(3, 0, 2), count: 3, seriesKey: ['date'] };
const meta: PageMeta = {
  productId: 'pemi',
  count: 3,
  totalCount: 9,
  nextCursor: 'next',
  generation: 4,
  dataLatestDate: 20003,
  maxObservedUs: 1_000 * 3_600_000_000,
  asOfUs: null,
  floorApplied: false,
  extensionKeys: ['generation'],
  extensionValues: [4],
};

function stampOf(recordId: string, hours: number): RequestStamp {
  return { recordId, retrievedAtUs: hours * 3_600_000_000 };
}

/** prefix and middle as the endpoint writes them: one writer, the middle right after the prefix. */
function parts(writer: ArrowFormatWriter, page: PageView, stamp: RequestStamp): { prefix: Buffer; middle: Buffer } {
  const out = new ByteWriter(1024);
  writer.writePrefix(out, meta, writer.shapeOf(page), stamp);
  const at = out.pos;
  writer.writeMiddle(out, { view: page, meta });
  const all = Buffer.from(out.view());
  return { prefix: all.subarray(0, at), middle: all.subarray(at) };
}

describe('ArrowFormatWriter: schema prefix, record-batch middle', () => {
  it('prefix + middle is the stream writeArrowStream writes with the same schema metadata', () => {
    const writer = new ArrowFormatWriter();
    const { prefix, middle } = parts(writer, view, stampOf('req_a', 1010));
    const t = tableFromIPC(Buffer.concat([prefix, middle]));
    const metadata = new Map(t.schema.metadata);
    expect(JSON.parse(metadata.get('pitcache.envelope')!)).toMatchObject({
      product_id: 'pemi',
      count: 3,
      next_cursor: 'next',
      metadata: { record_id: 'req_a' },
    });
    expect(metadata.get('pitcache.series_key')).toBe('["date"]');
    expect(Buffer.concat([prefix, middle]).equals(Buffer.from(arrowStreamBytes(view, metadata)))).toBe(true);
    expect(writer.prefixed).toBe(true);
  });

  it('the middle does not depend on the stamp; any request prefix (of any length) goes in front of it', () => {
    const writer = new ArrowFormatWriter();
    const a = parts(writer, view, stampOf('req_a', 1010));
    const rows = tableFromIPC(Buffer.concat([a.prefix, a.middle]))
      .toArray()
      .map((r) => (r as { toJSON(): unknown }).toJSON());
    for (const [id, hours] of [
      ['req_bb', 1011],
      ['req_' + 'x'.repeat(37), 1012.25],
      ['r', 7],
    ] as const) {
      const b = parts(writer, view, stampOf(id, hours));
      expect(b.middle.equals(a.middle)).toBe(true);
      expect(b.prefix.equals(a.prefix)).toBe(false);
      // A schema message is a whole number of 8-byte words: the middle's buffers stay aligned after any prefix.
      expect(b.prefix.byteLength % 8).toBe(0);
      const t = tableFromIPC(Buffer.concat([b.prefix, a.middle]));
      expect(t.toArray().map((r) => (r as { toJSON(): unknown }).toJSON())).toEqual(rows);
      expect(JSON.parse(t.schema.metadata.get('pitcache.envelope')!).metadata.record_id).toBe(id);
    }
  });

  it('zero rows: the middle is the end-of-stream marker alone', () => {
    const { prefix, middle } = parts(new ArrowFormatWriter(), { ...view, count: 0 }, stampOf('req_a', 1));
    expect([...middle]).toEqual([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    expect(tableFromIPC(Buffer.concat([prefix, middle])).numRows).toBe(0);
  });

  it("the shape kept with a cached middle is the layout's encoded messages (no column data), made once per layout", () => {
    const writer = new ArrowFormatWriter();
    const shape = writer.shapeOf(view);
    expect(shape).toBeInstanceOf(ArrowLayout);
    // Nothing reachable from the shape shares memory with a column: a cache entry holds no generation's data.
    const data = new Set<ArrayBufferLike>(
      [decision, ...stored].flatMap((c) => [...('values' in c ? [c.values.buffer] : []), ...(c.validity === null ? [] : [c.validity.buffer])]),
    );
    const seen = new Set<unknown>();
    const walk = (v: unknown): void => {
      if (v === null || typeof v !== 'object' || seen.has(v)) return;
      seen.add(v);
      if (ArrayBuffer.isView(v)) expect(data.has(v.buffer)).toBe(false);
      else for (const k of Object.keys(v)) walk((v as Record<string, unknown>)[k]);
    };
    walk(shape);
    expect(writer.shapeOf({ ...view, columns: [...columns] })).toBe(shape);
    const projected = parts(writer, { ...view, columns: columns.slice(1) }, stampOf('req_p', 1));
    expect(tableFromIPC(Buffer.concat([projected.prefix, projected.middle])).schema.fields.map((f) => f.name)).toEqual(['date', 'value']);
  });
});
