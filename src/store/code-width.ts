import type { CodeArray } from './column.js';
import { allocShared } from './shared-memory.js';

/**
 * The narrowest code array for a dictionary of `distinct` values: a loaded generation's
 * string columns cost 1 byte a row up to 256 values, 2 up to 65,536, else 4
 * (docs/snapshots.md#memory). Readers index it as any typed array.
 */
export function allocCodes(distinct: number, rows: number): CodeArray {
  if (distinct <= 0x100) return allocShared(Uint8Array, rows);
  if (distinct <= 0x10000) return allocShared(Uint16Array, rows);
  return allocShared(Int32Array, rows);
}

/** How many distinct codes `codes` can hold. */
export function codeCapacity(codes: CodeArray): number {
  return codes instanceof Uint8Array ? 0x100 : codes instanceof Uint16Array ? 0x10000 : 0x8000_0000;
}

/** `codes` as it is when its width fits `distinct` values, else a wider copy of its first `filled` rows (the rest zero). */
export function widenCodes(codes: CodeArray, distinct: number, filled: number): CodeArray {
  if (distinct <= codeCapacity(codes)) return codes;
  const wider = allocCodes(distinct, codes.length);
  wider.set(codes.subarray(0, filled));
  return wider;
}

/** The same codes in the narrowest array (a copy unless `codes` is already that narrow). */
export function narrowCodes(codes: Int32Array, distinct: number): CodeArray {
  const out = allocCodes(distinct, codes.length);
  if (out instanceof Int32Array && codes.buffer instanceof SharedArrayBuffer) return codes;
  out.set(codes);
  return out;
}
