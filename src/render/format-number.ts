/**
 * Numbers as JSON text, written straight into a byte array at a position. The caller has
 * reserved room (MAX_NUMBER_BYTES), so nothing here checks bounds or allocates on the
 * common paths; each function returns the position after what it wrote.
 */

/** Longest text of any number written here ("-0.0000012345678901234567", Int64 strings). */
export const MAX_NUMBER_BYTES = 32;

const TWO_53 = 9007199254740992;
const INT31_MAX = 0x7fffffff;
/** Fixed-point tries stop here: 10^k stays an exact double far beyond that. */
const MAX_FRACTION_DIGITS = 15;

const POW10: number[] = [];
for (let k = 0, p = 1; k <= 22; k++, p *= 10) POW10.push(p);

const NULL = [0x6e, 0x75, 0x6c, 0x6c];

export function putNull(b: Uint8Array, p: number): number {
  b[p] = NULL[0]!;
  b[p + 1] = NULL[1]!;
  b[p + 2] = NULL[2]!;
  b[p + 3] = NULL[3]!;
  return p + 4;
}

function digitCount(n: number): number {
  let len = 1;
  while (len < 16 && n >= POW10[len]!) len++;
  return len;
}

/** A non-negative integer below 2^53. */
export function putUint(b: Uint8Array, p: number, n: number): number {
  if (n < 10) {
    b[p] = 48 + n;
    return p + 1;
  }
  const end = p + digitCount(n);
  let i = end;
  // Above 2^31 the digits come off with exact double arithmetic (% is exact), then int32.
  while (n > INT31_MAX) {
    const r = n % 10;
    b[--i] = 48 + r;
    n = (n - r) / 10;
  }
  let v = n | 0;
  while (v >= 10) {
    const q = (v / 10) | 0;
    b[--i] = 48 + (v - q * 10);
    v = q;
  }
  b[--i] = 48 + v;
  return end;
}

/** Any integer of magnitude at most 2^53. */
export function putInt(b: Uint8Array, p: number, n: number): number {
  if (n < 0) {
    b[p] = 0x2d;
    return putUint(b, p + 1, -n);
  }
  return putUint(b, p, n);
}

/** Exactly `width` digits of 0 <= n < 10^width, zero-padded. */
function putPadded(b: Uint8Array, p: number, n: number, width: number): number {
  const end = p + width;
  for (let i = end - 1; i >= p; i--) {
    const r = n % 10;
    b[i] = 48 + r;
    n = (n - r) / 10;
  }
  return end;
}

/**
 * A double as a JSON number that parses back to exactly the same double; NaN and the
 * infinities as `null` (JSON has no such numbers); -0 as `0`.
 *
 * Most market values have few decimals, so the fast path looks for the fewest fraction
 * digits k whose fixed-point text round-trips: m = round(|x|·10^k) with m < 2^53 and
 * m / 10^k === |x|. Both operands are exact doubles, so that division is correctly rounded,
 * exactly as a JSON parser reads the decimal m·10^-k: the text is exact by construction.
 * Anything else goes to the engine's shortest round-trip formatting (String), whose output
 * is valid JSON for every finite double.
 */
export function putFloat(b: Uint8Array, p: number, x: number): number {
  if (x - x !== 0) return putNull(b, p); // NaN or ±Infinity
  let ax = x;
  if (x < 0) {
    b[p++] = 0x2d;
    ax = -x;
  }
  if (ax < TWO_53) {
    const whole = Math.floor(ax);
    if (whole === ax) return putUint(b, p, ax);
    for (let k = 1; k <= MAX_FRACTION_DIGITS; k++) {
      const scale = POW10[k]!;
      const m = Math.round(ax * scale);
      if (m >= TWO_53) break;
      if (m / scale === ax) {
        const frac = m % scale;
        p = putUint(b, p, (m - frac) / scale);
        b[p++] = 0x2e;
        return putPadded(b, p, frac, k);
      }
    }
  }
  return putAscii(b, p, String(ax));
}

/** A string known to be ASCII (engine number text). */
function putAscii(b: Uint8Array, p: number, s: string): number {
  for (let i = 0; i < s.length; i++) b[p + i] = s.charCodeAt(i);
  return p + s.length;
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
