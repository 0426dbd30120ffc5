/**
 * An Arrow column written into an Arrow answer exactly as it was given: a join's Arrow
 * event column (contract 15: "Arrow columns in their type"). It carries its type as the
 * schema's flatbuffer holds it and its buffers as the IPC body lays them out, so the Arrow
 * writer copies bytes and never decodes a value: any flat Arrow type passes, a dictionary
 * with its index type and its values (written as a dictionary batch before the record
 * batch). How the body's columns become this is the join's business (join/arrow-passthrough.ts).
 */

/** A scalar field of a flatbuffer table (a type's parameters: bit width, unit, precision...). */
export interface ArrowTypeScalar {
  readonly id: number;
  readonly kind: 'i32' | 'i16' | 'u8';
  readonly value: number;
}

/** A flat Arrow type: the Schema.fbs Type union's tag, its table's scalar fields, and Timestamp's time zone. */
export interface ArrowTypeSpec {
  readonly tag: number;
  readonly scalars: readonly ArrowTypeScalar[];
  /** Timestamp only: the zone, or null for none (a zone-less timestamp) */
  readonly timezone: string | null;
}

/** One array as the IPC body lays it out: validity first (empty when no nulls; absent for Null), then the type's buffers. */
export interface ArrowArray {
  readonly length: number;
  readonly nullCount: number;
  readonly buffers: readonly Uint8Array[];
}

export interface ArrowDictionarySpec {
  readonly indexBits: number;
  readonly indexSigned: boolean;
  readonly ordered: boolean;
  /** the dictionary's values, of `ArrowPassthrough.type` */
  readonly values: ArrowArray;
}

export interface ArrowPassthrough {
  /** the column's type; a dictionary's value type */
  readonly type: ArrowTypeSpec;
  /** the column's array; a dictionary's indices */
  readonly array: ArrowArray;
  readonly dictionary: ArrowDictionarySpec | null;
  /** the whole type as text, different for any two types (what a cached layout depends on) */
  readonly signature: string;
}
