import { put2, put4, put8, putAscii, putUint } from './digits.js';
import { putNull } from './format-number.js';

/**
 * Doubles as JSON numbers, written straight into a byte array at a position (the caller
 * reserves MAX_NUMBER_BYTES). The text is the engine's own (Number::toString: shortest
 * round-trip digits, nearest, ties to even), produced without allocating a string for the
 * values a response is made of; only outside [1e-6, 2^53) does it call String.
 */

const TWO_53 = 9007199254740992;

/** Powers of ten up to 10^22, all exact doubles. */
const POW10: number[] = [];
for (let k = 0, p = 1; k <= 22; k++, p *= 10) POW10.push(p);

/**
 * Below this, ax·10^6 < 2^51, and then a shorter decimal that round-trips implies the 6-digit
 * one does (see putFraction, step 1): probing 6 decimals finds every value with at most 6.
 */
const SHORT_MAX = 2e9;

/** Veltkamp's constant: splits a double into two 26-bit halves for an exact product. */
const SPLIT = 134217729;
/** A double's two 32-bit words, for its exponent. */
const bits = new Float64Array(1);
const words = new Uint32Array(bits.buffer);
const HI_WORD = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 1 : 0;
/** Digits of the number being written: 10 for the top part, 8 for the low. */
const digits = new Uint8Array(18);
/**
 * The double being written, handed to putFloatIn and putFraction through memory, not as an
 * argument: a double passed to a call V8 does not inline is boxed into a fresh HeapNumber,
 * one per cell (allocation per request: docs/decisions.md#allocation). Read once at their start.
 */
const arg = new Float64Array(1);

/**
 * A double as a JSON number that parses back to exactly the same double; NaN and the
 * infinities as `null` (JSON has no such numbers); -0 as `0`.
 *
 * Integers below 2^53 are written as integers. Other values in [1e-6, 2^53) (the range
 * where plain fixed notation is natural) are written by putFraction without allocating;
 * the rest go to the engine's shortest round-trip formatting (String), whose output is
 * valid JSON for every finite double.
 */
export function putFloat(b: Uint8Array, p: number, x: number): number {
  arg[0] = x;
  return putFloatIn(b, p);
}

/** putFloat of values[row], for the cell writers: the double is read here, never passed (see `arg`). */
export function putFloatAt(b: Uint8Array, p: number, values: Float64Array, row: number): number {
  arg[0] = values[row]!;
  return putFloatIn(b, p);
}

/** putFloat of arg[0]. */
function putFloatIn(b: Uint8Array, p: number): number {
  const x = arg[0]!;
  if (x - x !== 0) return putNull(b, p); // NaN or ±Infinity
  let ax = x;
  if (x < 0) {
    b[p++] = 0x2d;
    ax = -x;
  }
  if (ax < TWO_53) {
    if (Math.floor(ax) === ax) return putUint(b, p, ax); // -0 lands here too, as 0
    if (ax < SHORT_MAX) {
      // Most stored values have a few decimals: one probe at 6 decimals settles those.
      const m = Math.round(ax * 1e6);
      if (m / 1e6 === ax) {
        const whole = Math.floor(ax);
        return putFractionDigits(putUint(b, p, whole), b, m - whole * 1e6);
      }
    }
    if (ax >= 1e-6) {
      arg[0] = ax;
      return putFraction(b, p);
    }
  }
  return putAscii(b, p, String(ax));
}

/** `.` and the digits of f·10^-6 for an integer 0 < f < 10^6, trailing zeros dropped. */
function putFractionDigits(p: number, b: Uint8Array, f: number): number {
  const fi = f | 0;
  b[p] = 0x2e;
  if (fi % 100 !== 0) {
    const hi = (fi / 10000) | 0;
    put2(b, p + 1, hi);
    put4(b, p + 3, fi - hi * 10000);
    return fi % 10 === 0 ? p + 6 : p + 7;
  }
  const c = (fi / 100) | 0; // 4 digits, the last not all zero
  if (c % 100 !== 0) {
    put4(b, p + 1, c);
    return c % 10 === 0 ? p + 4 : p + 5;
  }
  const d = (c / 100) | 0;
  put2(b, p + 1, d);
  return d % 10 === 0 ? p + 2 : p + 3;
}

/**
 * Dekker's TwoProduct: the exact error of the rounded product p = fl(a·s), so that a·s is
 * exactly p + err (no overflow is possible in the ranges used here).
 */
function productError(a: number, s: number, p: number): number {
  let t = SPLIT * a;
  const ah = t - (t - a);
  const al = a - ah;
  t = SPLIT * s;
  const sh = t - (t - s);
  const sl = s - sh;
  return ah * sh - p + ah * sl + al * sh + al * sl;
}

/**
 * A non-integer 1e-6 <= ax < 2^53 (in arg[0]) in fixed notation with as few digits as this finds:
 *
 * With n chosen so that P = ax·10^n lies in [1e16, 1e17) (17 significant digits):
 * 1. 15 digits: m = round(ax·10^(n-2)) < 2^51. m and the power of ten are exact doubles, so
 *    m / 10^k is correctly rounded, exactly as a JSON parser reads the decimal m·10^-k:
 *    `m / 10^k === ax` proves the text exact. Below 2^51 the rounding error of ax·10^k stays
 *    under one half, so if any shorter decimal round-trips, this m is it times a power of ten:
 *    stripping trailing zeros then gives the shortest.
 * 2. 16 digits: the integer nearest to the exact product ax·10^(n-1) (TwoProduct), tested by
 *    the same division below 2^53, else by its exact distance to ax against half an ulp.
 * 3. 17 digits always suffice: P is exact as hi + lo (TwoProduct) and the nearest integer to
 *    it lies within 0.45 ulp of ax (10^16 > 2^53), so it parses back to ax. It may exceed
 *    2^53, so its digits are kept as two parts, top·10^8 + low.
 * Among equally short candidates the nearest is taken (ties to even), as Number::toString
 * does: in this range the text is the engine's, without the allocation.
 */
function putFraction(b: Uint8Array, p: number): number {
  const ax = arg[0]!;
  // ⌊e2·log10(2)⌋ is ⌊log10(ax)⌋ or one less, so n is right or one too big.
  bits[0] = ax;
  let n = 16 - Math.floor((((words[HI_WORD]! >>> 20) & 0x7ff) - 1023) * 0.30102999566398114);
  if (n < 1 || n > 23) return putAscii(b, p, String(ax));
  if (ax * POW10[n]! >= 1e17) n--;
  else if (ax * POW10[n]! < 1e16) n++;
  if (n < 2 || n > 22) return putAscii(b, p, String(ax));
  const scale = POW10[n]!;
  const hi = ax * scale;
  if (hi < 1e16 || hi >= 1e17) return putAscii(b, p, String(ax));

  const s15 = POW10[n - 2]!;
  const m = Math.round(ax * s15);
  if (m / s15 === ax) {
    const top = splitTop(m);
    return putDecimal(b, p, top, m - top * 1e8, n - 2);
  }

  // The candidate c = r + delta is the integer nearest to P' = ax·10^(n-1) = h16 + l16.
  const s16 = POW10[n - 1]!;
  const h16 = ax * s16;
  const r = Math.round(h16);
  const frac = h16 - r + productError(ax, s16, h16);
  const delta = frac > 0.5 ? 1 : frac < -0.5 ? -1 : 0;
  if (r + delta < TWO_53) {
    const c = r + delta;
    if (c / s16 === ax) {
      const top = splitTop(c);
      return putDecimal(b, p, top, c - top * 1e8, n - 1);
    }
  } else if (inRoundingInterval(ax, delta - frac, s16)) {
    // r >= 2^53 is an integer double; r + delta may not be one, so carry it in the low part.
    const top = splitTop(r);
    return putSplit(b, p, top, r - top * 1e8 + delta, n - 1);
  }

  // hi >= 1e16 > 2^53 is an even integer and |lo| <= ulp(hi)/2 <= 8: round(P) is
  // hi + round(lo), ties to even as Number::toString does.
  const lo = productError(ax, scale, hi);
  let rounded = Math.round(lo);
  if (rounded - lo === 0.5 && (rounded & 1) !== 0) rounded -= 1;
  const top = splitTop(hi);
  return putSplit(b, p, top, hi - top * 1e8 + rounded, n);
}

/**
 * Whether a decimal at signed distance `diff` from ax, in units of 10^-scaleDigits (scale =
 * 10^scaleDigits), reads back as ax: strictly inside half an ulp either side (a quarter below
 * a power of two). The margin makes borderline cases fail safe, to 17 digits.
 */
function inRoundingInterval(ax: number, diff: number, scale: number): boolean {
  bits[0] = ax;
  const hiWord = words[HI_WORD]!;
  const ulp = 2 ** ((hiWord >>> 20) - 1075);
  const powerOfTwo = (hiWord & 0xfffff) === 0 && words[1 - HI_WORD] === 0;
  const margin = 1 - 2 ** -30;
  const above = ulp * 0.5 * scale * margin;
  const below = (powerOfTwo ? ulp * 0.25 : ulp * 0.5) * scale * margin;
  return diff < above && diff > -below;
}

/** putDecimal of top·10^8 + low where low may have left [0, 10^8) by a small carry. */
function putSplit(b: Uint8Array, p: number, top: number, low: number, k: number): number {
  if (low < 0) return putDecimal(b, p, top - 1, low + 1e8, k);
  if (low >= 1e8) return putDecimal(b, p, top + 1, low - 1e8, k);
  return putDecimal(b, p, top, low, k);
}

/** floor(v / 1e8) for an integer 0 <= v < 2^57: the quotient may round up onto an integer. */
function splitTop(v: number): number {
  const t = Math.floor(v / 1e8);
  return t * 1e8 > v ? t - 1 : t;
}

/**
 * Writes the integer top·10^8 + low (top < 10^10, low < 10^8) divided by 10^k, in fixed
 * notation without trailing fraction zeros.
 */
function putDecimal(b: Uint8Array, p: number, top: number, low: number, k: number): number {
  const d = digits;
  const t1 = (top / 100000000) | 0;
  put2(d, 0, t1);
  put8(d, 2, top - t1 * 100000000);
  put8(d, 10, low);
  let i = 0;
  while (i < 17 && d[i] === 0x30) i++;
  const len = 18 - i;
  let end = 18;
  const pointAt = 18 - k;
  while (end > pointAt && end > i && d[end - 1] === 0x30) end--;
  if (len > k) {
    for (let j = i; j < pointAt; j++) b[p++] = d[j]!;
    if (end > pointAt) {
      b[p++] = 0x2e;
      for (let j = pointAt; j < end; j++) b[p++] = d[j]!;
    }
    return p;
  }
  b[p++] = 0x30;
  b[p++] = 0x2e;
  for (let j = len; j < k; j++) b[p++] = 0x30;
  for (let j = i; j < end; j++) b[p++] = d[j]!;
  return p;
}
