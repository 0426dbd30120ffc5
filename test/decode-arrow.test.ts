import type { Field } from 'apache-arrow';
import { makeData, makeVector, Schema, TimestampMicrosecond, Table as ArrowTable, tableToIPC, DateDay, Utf8, vectorFromArray } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { decodeArrowSnapshot } from '../src/store/decode-arrow.js';

describe('decoding snapshots (contract 6)', () => {
  it('a null timestamp slot holding garbage (pandas NaT) is a null, not an out-of-range refusal', () => {
    const ts = (values: bigint[], validity?: Uint8Array) =>
      makeVector(
        makeData({
          type: new TimestampMicrosecond('UTC'),
          data: new BigInt64Array(values),
          length: values.length,
          nullCount: validity ? 1 : 0,
          nullBitmap: validity ?? null,
        }),
      );
    const day = 20_500;
    const obs = 1_775_001_600_000_000n;
    const table = new ArrowTable({
      date: makeVector(makeData({ type: new DateDay(), data: new Int32Array([day, day + 1]), length: 2 })),
      str_effective_at: ts([obs, obs]),
      str_observed_at: ts([obs, obs]),
      str_ingested_at: ts([obs, obs]),
      model_version: vectorFromArray(['1.0', '1.0'], new Utf8()),
      published_at: ts([obs, -(2n ** 63n)], new Uint8Array([0b01])),
    });
    const withKey = new ArrowTable(new Schema(table.schema.fields as Field[], new Map([['pitcache.series_key', '[]']])), table.batches);
    const decoded = decodeArrowSnapshot(tableToIPC(withKey, 'file'));
    const col = decoded.columns.find((c) => c.name === 'published_at')!;
    expect(col.kind).toBe('timestamp');
    expect(col.validity).toEqual(new Uint8Array([1, 0]));
    expect((col as { values: Float64Array }).values[0]).toBe(Number(obs));
  });
});
