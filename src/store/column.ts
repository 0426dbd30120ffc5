/**
 * Decoded columns of one snapshot generation. Buffers only (the "Data"): what a value means
 * for a query or a response is decided elsewhere. Every array is indexed by row, rows being
 * in the table's physical order (see table.ts), and lives on a SharedArrayBuffer.
 */

/** Per-row validity: 1 valid, 0 null. Absent when the column has no nulls. */
export type Validity = Uint8Array | null;

export type IntArray = Int8Array | Int16Array | Int32Array | Uint8Array | Uint16Array | Uint32Array;

export type TimeUnit = 's' | 'ms' | 'us';

/**
 * Distinct strings of a column. Codes are dense 0..n-1. `utf8` holds each value's UTF-8
 * bytes (what CSV and Arrow write; a lone surrogate, which UTF-8 cannot carry, is U+FFFD
 * there, as TextEncoder and Arrow writers do). How a value is written in a format (JSON's
 * escaped literal, CSV's quoting) is the format writer's business, derived from `values`
 * (format/json/json-literals.ts). `rank[code]` orders values by UTF-8 byte order (the
 * contract's sort order).
 */
export interface StringDictionary {
  readonly values: readonly string[];
  readonly utf8: Uint8Array;
  /** utf8 bytes of code c are utf8[utf8Offsets[c] .. utf8Offsets[c+1]). */
  readonly utf8Offsets: Int32Array;
  readonly rank: Int32Array;
  /** value -> code */
  readonly codeOf: ReadonlyMap<string, number>;
}

interface Base {
  readonly name: string;
  readonly validity: Validity;
}

export interface FloatColumn extends Base {
  readonly kind: 'float';
  readonly values: Float64Array | Float32Array;
}
export interface IntColumn extends Base {
  readonly kind: 'int';
  readonly values: IntArray;
}
/** Int64: values beyond 2^53 in magnitude render as JSON strings (contract 4). */
export interface Int64Column extends Base {
  readonly kind: 'int64';
  readonly values: BigInt64Array;
}
export interface BoolColumn extends Base {
  readonly kind: 'bool';
  readonly values: Uint8Array;
}
/**
 * A string column's codes: a loaded generation keeps them in the narrowest array its
 * dictionary allows (1 byte a row up to 256 distinct values, 2 up to 65,536:
 * docs/snapshots.md#memory); other tables (a join's events) may hold Int32 codes.
 */
export type CodeArray = Uint8Array | Uint16Array | Int32Array;

/** Utf8 and Dictionary<Utf8> alike: codes into one dictionary per column. */
export interface StringColumn extends Base {
  readonly kind: 'string';
  readonly codes: CodeArray;
  readonly dict: StringDictionary;
}
export interface Date32Column extends Base {
  readonly kind: 'date32';
  /** days since epoch */
  readonly values: Int32Array;
}
export interface TimestampColumn extends Base {
  readonly kind: 'timestamp';
  /** The Arrow unit: decides the rendered precision. */
  readonly unit: TimeUnit;
  /** microseconds since epoch, UTC */
  readonly values: Float64Array;
}

export type Column = FloatColumn | IntColumn | Int64Column | BoolColumn | StringColumn | Date32Column | TimestampColumn;
