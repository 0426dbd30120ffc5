import { daysFromCivil, US_PER_DAY, US_PER_SECOND } from '../time/instant.js';

/**
 * `at` read from bytes, as `as_of` is read from text (contract 1, time/instant.ts): a date
 * `YYYY-MM-DD` is the end of that UTC day; an RFC 3339 instant with `Z` or an offset is that
 * instant, digits past the microsecond truncated. NaN when it is neither. Read in place: a
 * million events make no string.
 */
export function parseAtBytes(b: Uint8Array, start: number, end: number): number {
  const len = end - start;
  if (len < 10 || b[start + 4] !== 0x2d || b[start + 7] !== 0x2d) return NaN;
  const y = digits(b, start, 4);
  const mo = digits(b, start + 5, 2);
  const d = digits(b, start + 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return NaN;
  const day = daysFromCivil(y, mo, d);
  if (len === 10) return (day + 1) * US_PER_DAY - 1;
  let p = start + 10;
  const t = b[p];
  if ((t !== 0x54 && t !== 0x74) || len < 20 || b[p + 3] !== 0x3a || b[p + 6] !== 0x3a) return NaN;
  const h = digits(b, p + 1, 2);
  const mi = digits(b, p + 4, 2);
  const s = digits(b, p + 7, 2);
  if (h < 0 || mi < 0 || s < 0 || h > 23 || mi > 59 || s > 60) return NaN;
  p += 9;
  let micros = 0;
  if (b[p] === 0x2e) {
    p++;
    let n = 0;
    while (p < end && b[p]! >= 0x30 && b[p]! <= 0x39) {
      if (n < 6) micros = micros * 10 + (b[p]! - 0x30);
      n++;
      p++;
    }
    if (n < 1 || n > 9) return NaN;
    for (let k = n; k < 6; k++) micros *= 10;
  }
  let offsetMin = 0;
  const z = b[p];
  if (z === 0x5a || z === 0x7a) {
    if (p + 1 !== end) return NaN;
  } else if (z === 0x2b || z === 0x2d) {
    if (p + 6 !== end || b[p + 3] !== 0x3a) return NaN;
    const oh = digits(b, p + 1, 2);
    const om = digits(b, p + 4, 2);
    if (oh < 0 || om < 0 || oh > 23 || om > 59) return NaN;
    offsetMin = (z === 0x2d ? -1 : 1) * (oh * 60 + om);
  } else {
    return NaN;
  }
  const seconds = day * 86_400 + h * 3600 + mi * 60 + s - offsetMin * 60;
  return seconds * US_PER_SECOND + micros;
}

function digits(b: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = b[i]! - 0x30;
    if (!(c >= 0 && c <= 9)) return -1;
    v = v * 10 + c;
  }
  return v;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(y: number, m: number): number {
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return m === 2 ? (leap ? 29 : 28) : MONTH_DAYS[m - 1]!;
}
