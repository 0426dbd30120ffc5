/**
 * Decimal digits into a byte array at a position, two at a time from a table. Division is
 * the slow step of digit generation, so each function uses as few as it can: a 4-digit
 * chunk splits with a multiply and a shift ((n·5243) >>> 19 is ⌊n/100⌋ for n < 43699).
 * Callers reserve room; each function returns the next position.
 */

/** "00".."99" as byte pairs. */
const DIGITS2 = new Uint8Array(200);
for (let i = 0; i < 100; i++) {
  DIGITS2[2 * i] = 48 + Math.floor(i / 10);
  DIGITS2[2 * i + 1] = 48 + (i % 10);
}

/** Exactly two digits of 0 <= n < 100. */
export function put2(b: Uint8Array, p: number, n: number): number {
  b[p] = DIGITS2[2 * n]!;
  b[p + 1] = DIGITS2[2 * n + 1]!;
  return p + 2;
}

/** Exactly four digits of 0 <= n < 10^4. */
export function put4(b: Uint8Array, p: number, n: number): number {
  const hi = (n * 5243) >>> 19;
  put2(b, p, hi);
  put2(b, p + 2, n - hi * 100);
  return p + 4;
}

/** Exactly eight digits of 0 <= n < 10^8. */
export function put8(b: Uint8Array, p: number, n: number): number {
  const hi = (n / 10000) | 0;
  put4(b, p, hi);
  put4(b, p + 4, n - hi * 10000);
  return p + 8;
}

/** 0 <= n < 10^4 without leading zeros. */
function putUpTo4(b: Uint8Array, p: number, n: number): number {
  if (n < 10) {
    b[p] = 48 + n;
    return p + 1;
  }
  if (n < 100) return put2(b, p, n);
  if (n < 1000) {
    const hi = (n * 5243) >>> 19;
    b[p] = 48 + hi;
    return put2(b, p + 1, n - hi * 100);
  }
  return put4(b, p, n);
}

/** A non-negative integer below 2^53, without leading zeros. */
export function putUint(b: Uint8Array, p: number, n: number): number {
  if (n < 10000) return putUpTo4(b, p, n);
  if (n < 100000000) {
    const hi = (n / 10000) | 0;
    return put4(b, putUpTo4(b, p, hi), n - hi * 10000);
  }
  // Above 10^8: the quotient of the double division may round up onto an integer.
  let top = Math.floor(n / 100000000);
  if (top * 100000000 > n) top -= 1;
  return put8(b, putUint(b, p, top), n - top * 100000000);
}

/** A string known to be ASCII (engine number text). */
export function putAscii(b: Uint8Array, p: number, s: string): number {
  for (let i = 0; i < s.length; i++) b[p + i] = s.charCodeAt(i);
  return p + s.length;
}
