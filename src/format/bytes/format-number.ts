/**
 * Numbers as JSON text, written straight into a byte array at a position. The caller has
 * reserved room (MAX_NUMBER_BYTES), so nothing here checks bounds or allocates on the
 * common paths; each function returns the position after what it wrote.
 */
import { putAscii, putUint } from './digits.js';

export { putUint };

/** Longest text of any number written here ("-0.0000012345678901234567", Int64 strings). */
export const MAX_NUMBER_BYTES = 32;

const NULL = [0x6e, 0x75, 0x6c, 0x6c];

export function putNull(b: Uint8Array, p: number): number {
  b[p] = NULL[0]!;
  b[p + 1] = NULL[1]!;
  b[p + 2] = NULL[2]!;
  b[p + 3] = NULL[3]!;
  return p + 4;
}

/** Any integer of magnitude at most 2^53. */
export function putInt(b: Uint8Array, p: number, n: number): number {
  if (n < 0) {
    b[p] = 0x2d;
    return putUint(b, p + 1, -n);
  }
  return putUint(b, p, n);
}

/**
 * An Int64 given as its two 32-bit halves (hi signed, lo unsigned): a JSON number when its
 * magnitude is at most 2^53, else the decimal as a JSON string (contract 4). Halves keep the
 * common case free of BigInt allocation.
 */
export function putInt64Halves(b: Uint8Array, p: number, hi: number, lo: number): number {
  // |v| <= 2^53  <=>  -2^21 <= hi < 2^21, or v === 2^53 exactly.
  if ((hi >= -0x200000 && hi < 0x200000) || (hi === 0x200000 && lo === 0)) {
    return putInt(b, p, hi * 4294967296 + lo);
  }
  return putBigIntString(b, p, BigInt(hi) * 4294967296n + BigInt(lo));
}

/** The same rule for a BigInt (the portable path). */
export function putInt64(b: Uint8Array, p: number, v: bigint): number {
  if (v >= -9007199254740992n && v <= 9007199254740992n) return putInt(b, p, Number(v));
  return putBigIntString(b, p, v);
}

function putBigIntString(b: Uint8Array, p: number, v: bigint): number {
  b[p++] = 0x22;
  p = putAscii(b, p, v.toString());
  b[p++] = 0x22;
  return p;
}
