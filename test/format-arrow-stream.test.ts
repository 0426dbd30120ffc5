/**
 * The hand-framed Arrow IPC stream (src/format/arrow/ipc-stream.ts), read back by
 * apache-arrow: every column kind the store holds, stored (read at the page's rows) and
 * computed (read at output position), nulls, and the same bytes whether or not the
 * output buffer happens to be 8-byte aligned.
 */
import { tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { arrowStreamBytes, writeArrowStream } from '../src/format/arrow/ipc-stream.js';
import type { OutputColumn, PageView } from '../src/format/page-view.js';
import { ByteWriter } from '../src/render/byte-writer.js';
import type { Column, StringDictionary } from '../src/store/column.js';

function dict(values: string[]): StringDictionary {
  const parts = values.map((v) => Buffer.from(v, 'utf8'));
  const utf8Offsets = new Int32Array(values.length + 1);
  parts.forEach((p, i) => (utf8Offsets[i + 1] = utf8Offsets[i]! + p.length));
  return { values, utf8: Buffer.concat(parts), utf8Offsets, rank: Int32Array.from(values.keys()), codeOf: new Map(values.map((v, i) => [v, i])) };
}

// Four stored rows; the page reads rows 3, 0, 2 in that order.
const stored: Column[] = [
  { kind: 'date32', name: 'date', validity: null, values: Int32Array.of(20000, 20001, 20002, 20003) },
  { kind: 'string', name: 'zone', validity: Uint8Array.of(1, 1, 0, 1), codes: Int32Array.of(0, 1, 0, 2), dict: dict(['DE', 'é"x', 'ümlaut,\n']) },
  { kind: 'float', name: 'f32', validity: null, values: Float32Array.of(0.5, NaN, -1.25, 3) },
  { kind: 'float', name: 'f64', validity: Uint8Array.of(1, 0, 1, 1), values: Float64Array.of(1.5, 0, -0, 1e300) },
  { kind: 'int', name: 'i16', validity: null, values: Int16Array.of(-3, 7, 32767, -32768) },
  { kind: 'int64', name: 'big', validity: null, values: BigInt64Array.of(1n, -(2n ** 62n), 2n ** 53n + 1n, -1n) },
  { kind: 'bool', name: 'flag', validity: Uint8Array.of(1, 1, 1, 0), values: Uint8Array.of(1, 0, 1, 1) },
  { kind: 'timestamp', name: 'ts_ms', unit: 'ms', validity: null, values: Float64Array.of(1_700_000_000_123_000, 0, -1_000, 86_400_000_000) },
];
const computed: Column = {
  kind: 'timestamp',
  name: 'visible_to',
  unit: 'us',
  validity: Uint8Array.of(0, 1, 1),
  values: Float64Array.of(0, 1_775_001_600_000_001, -1),
};
const page: PageView = {
  columns: [...stored.map((column): OutputColumn => ({ column, at: 'row' })), { column: computed, at: 'position' }],
  rows: Int32Array.of(3, 0, 2),
  count: 3,
  seriesKey: ['zone'],
};
const meta = new Map([['pitcache.series_key', '["zone"]']]);

describe('Arrow IPC stream writer', () => {
  it('writes every column kind with its Arrow type, gathered at the page rows or positions', () => {
    const t = tableFromIPC(arrowStreamBytes(page, meta));
    expect(t.schema.metadata.get('pitcache.series_key')).toBe('["zone"]');
    expect(t.schema.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual([
      'date:Date32<DAY>',
      'zone:Utf8',
      'f32:Float32',
      'f64:Float64',
      'i16:Int16',
      'big:Int64',
      'flag:Bool',
      'ts_ms:Timestamp<MILLISECOND, UTC>',
      'visible_to:Timestamp<MICROSECOND, UTC>',
    ]);
    const col = (name: string): unknown[] => [...t.getChild(name)!];
    expect(col('date')).toEqual([20003, 20000, 20002].map((d) => d * 86_400_000));
    expect(col('zone')).toEqual(['ümlaut,\n', 'DE', null]);
    expect(col('f32')).toEqual([3, 0.5, -1.25]);
    expect(col('f64')).toEqual([1e300, 1.5, -0]);
    expect(col('i16')).toEqual([-32768, -3, 32767]);
    expect(col('big')).toEqual([-1n, 1n, 2n ** 53n + 1n]);
    expect(col('flag')).toEqual([null, true, true]);
    // apache-arrow reads timestamps as ms numbers; the raw int64 words hold the unit's values
    expect(col('ts_ms')).toEqual([86_400_000_000 / 1000, 1_700_000_000_123, -1]);
    const raw = t.getChild('visible_to')!.data[0]!.values as BigInt64Array;
    expect([...raw.subarray(1, 3)]).toEqual([1_775_001_600_000_001n, -1n]);
    expect(t.getChild('visible_to')!.isValid(0)).toBe(false);
    expect(t.getChild('f64')!.nullCount).toBe(0);
    expect(t.getChild('zone')!.nullCount).toBe(1);
  });

  it('NaN stays NaN in a column without nulls', () => {
    const t = tableFromIPC(arrowStreamBytes({ ...page, rows: Int32Array.of(1), count: 1 }, meta));
    expect(Number.isNaN(t.getChild('f32')!.get(0))).toBe(true);
  });

  it('zero rows: the schema message and the end-of-stream marker, no batch', () => {
    const bytes = arrowStreamBytes({ ...page, count: 0 }, meta);
    const t = tableFromIPC(bytes);
    expect(t.numRows).toBe(0);
    // one message (0xFFFFFFFF, length, schema) and the marker: nothing else
    const schemaLength = Buffer.from(bytes).readInt32LE(4);
    expect(bytes.length).toBe(8 + schemaLength + 8);
    expect(t.schema.fields.length).toBe(9);
    expect([...bytes.subarray(bytes.length - 8)]).toEqual([255, 255, 255, 255, 0, 0, 0, 0]);
  });

  it('the same stream whatever the alignment of the output buffer', () => {
    const aligned = arrowStreamBytes(page, meta);
    for (const prefix of [1, 3, 4, 8]) {
      const w = new ByteWriter(64 * 1024);
      for (let i = 0; i < prefix; i++) w.byte(0xab);
      writeArrowStream(w, page, meta);
      expect(Buffer.from(w.view().subarray(prefix)).equals(Buffer.from(aligned)), `prefix ${prefix}`).toBe(true);
    }
  });
});
