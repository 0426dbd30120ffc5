/**
 * Timestamps are read as two 32-bit words per cell instead of a BigInt per cell. The result
 * must be exactly Number(BigInt) times the unit's µs, and the range check must refuse
 * exactly what it refused before (any non-null value outside ±2^53 µs), naming the first
 * such row across record batches. Null slots are never checked, whatever they hold.
 */
import { TimestampMicrosecond, TimestampMillisecond, TimestampSecond, makeData, makeVector } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { buildArrowSnapshot, type TimeUnitName } from '../src/snapshot/arrow-writer.js';
import { decodeArrowSnapshot } from '../src/store/decode-arrow.js';
import { snapshotWithColumn } from './support/hand-built-snapshot.js';

const SAFE = 2 ** 53;
const SCALE = { s: 1_000_000, ms: 1_000, us: 1 } as const;
type Unit = keyof typeof SCALE;
const UNITS: readonly Unit[] = ['s', 'ms', 'us'];
const NOW_US = 1_775_001_600_000_000n;

/** The decoding this replaced, and its range check. */
const referenceUs = (v: bigint, unit: Unit): number => Number(v) * SCALE[unit];
const inRange = (v: bigint, unit: Unit): boolean => {
  const us = referenceUs(v, unit);
  return us > -SAFE && us < SAFE;
};

/** Values around every word boundary, the ends of the range for the unit, and their negatives. */
function edgeValues(unit: Unit): bigint[] {
  const top = BigInt(Math.floor((SAFE - 1) / SCALE[unit]));
  const around = [
    0n,
    1n,
    2n ** 31n - 1n,
    2n ** 31n,
    2n ** 32n - 1n,
    2n ** 32n,
    2n ** 32n + 1n,
    2n ** 40n + 12_345n,
    2n ** 52n + 1n,
    top - 1n,
    top,
    top + 1n,
    top + 2n ** 32n,
    2n ** 62n,
    2n ** 63n - 1n,
  ];
  return [...around, ...around.map((v) => -v), -(2n ** 63n)];
}

function snapshot(unit: Unit, stamp: ReadonlyArray<bigint | null>, batchRows: number): Uint8Array {
  const n = stamp.length;
  const same = (): bigint[] => Array.from({ length: n }, () => NOW_US);
  return buildArrowSnapshot({
    seriesKey: [],
    batchRows,
    columns: [
      { name: 'date', type: 'date32', values: Array.from({ length: n }, (_, i) => 20_000 + i) },
      { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: same() },
      { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: same() },
      { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: same() },
      { name: 'model_version', type: 'utf8', values: Array.from({ length: n }, () => '1.0') },
      { name: 'stamp', type: 'timestamp', unit: unit as TimeUnitName, values: stamp },
    ],
  });
}

function stampOf(bytes: Uint8Array): { values: Float64Array; validity: Uint8Array | null } {
  const c = decodeArrowSnapshot(bytes).columns.find((x) => x.name === 'stamp')!;
  if (c.kind !== 'timestamp') throw new Error('stamp must decode as a timestamp');
  return c;
}

describe.each(UNITS)('timestamps in %s', (unit) => {
  const edges = edgeValues(unit);
  const good = edges.filter((v) => inRange(v, unit));
  const bad = edges.filter((v) => !inRange(v, unit));

  it('every in-range value, negative ones included, is exactly Number(BigInt) times the unit', () => {
    expect(good.length).toBeGreaterThanOrEqual(16);
    const stamp = [...good, null, ...good.slice().reverse()];
    const { values, validity } = stampOf(snapshot(unit, stamp, 5));
    stamp.forEach((v, i) => {
      if (v === null) expect(validity![i]).toBe(0);
      else expect(Object.is(values[i], referenceUs(v, unit)), `row ${i}: ${v}`).toBe(true);
    });
  });

  it('each out-of-range value is refused, naming its row across record batches', () => {
    expect(bad.length).toBeGreaterThan(6);
    for (const v of bad) {
      const stamp: Array<bigint | null> = [...good.slice(0, 7), null, v, ...good.slice(0, 3), v];
      expect(() => stampOf(snapshot(unit, stamp, 3)), String(v)).toThrow(`column "stamp": timestamp out of range at row 8`);
    }
  });

  it('a null slot is never range-checked, whatever the writer left in it', () => {
    // Built by hand: the writer of this repository zeroes null slots.
    const type = unit === 's' ? new TimestampSecond('UTC') : unit === 'ms' ? new TimestampMillisecond('UTC') : new TimestampMicrosecond('UTC');
    const raw = [good[5]!, -(2n ** 63n), 2n ** 63n - 1n, bad[0]!, good[9]!];
    const n = raw.length;
    const stamp = makeVector(makeData({ type, data: BigInt64Array.from(raw), length: n, nullCount: 3, nullBitmap: new Uint8Array([0b10001]) }));
    const { values, validity } = stampOf(snapshotWithColumn('stamp', stamp, NOW_US));
    expect(Array.from(validity!)).toEqual([1, 0, 0, 0, 1]);
    expect(values[0]).toBe(referenceUs(raw[0]!, unit));
    expect(values[4]).toBe(referenceUs(raw[4]!, unit));
  });
});
