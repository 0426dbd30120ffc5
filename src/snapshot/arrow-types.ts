/**
 * The Arrow types the snapshot writers emit, named once: every writer of a column (the
 * snapshot writer from JS values, the publisher's part writer from decoded columns) picks
 * the same Arrow type for the same column type, so their bytes agree.
 */
import {
  DateDay,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint8,
  type DataType,
} from 'apache-arrow';

export type TimeUnitName = 's' | 'ms' | 'us' | 'ns';

export type FixedWidthArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array | Float32Array | Float64Array | BigInt64Array;

/** The Arrow type and typed array of each fixed-width column type, whose values are stored as they are. */
export const FIXED_WIDTH = {
  date32: [DateDay, Int32Array],
  float64: [Float64, Float64Array],
  float32: [Float32, Float32Array],
  int8: [Int8, Int8Array],
  int16: [Int16, Int16Array],
  int32: [Int32, Int32Array],
  uint8: [Uint8, Uint8Array],
  uint16: [Uint16, Uint16Array],
  uint32: [Uint32, Uint32Array],
  int64: [Int64, BigInt64Array],
} as const satisfies Record<string, readonly [new () => DataType, new (n: number) => FixedWidthArray]>;

export type FixedWidthType = keyof typeof FIXED_WIDTH;

/** The fixed-width entry of a column type, or undefined for the others (timestamps, strings, booleans). */
export function fixedWidth(type: string): readonly [new () => DataType, new (n: number) => FixedWidthArray] | undefined {
  return Object.hasOwn(FIXED_WIDTH, type) ? FIXED_WIDTH[type as FixedWidthType] : undefined;
}

/** A UTC timestamp type of the unit. */
export function timestampType(unit: TimeUnitName): DataType {
  switch (unit) {
    case 's':
      return new TimestampSecond('UTC');
    case 'ms':
      return new TimestampMillisecond('UTC');
    case 'us':
      return new TimestampMicrosecond('UTC');
    case 'ns':
      return new TimestampNanosecond('UTC');
  }
}
