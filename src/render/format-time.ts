import { put2, put4 } from './digits.js';
import { putNull } from './format-number.js';

/**
 * Dates and instants as quoted JSON strings, written straight into a byte array at a
 * position (the caller has reserved MAX_DATE_BYTES / MAX_TIMESTAMP_BYTES). Civil dates come
 * from integer arithmetic, never a Date object; each function returns the next position.
 */

/** `"` + sign and 7-digit year (Date32 spans ±5.8 million years) + `-MM-DD"`. */
export const MAX_DATE_BYTES = 18;
/** A quoted date, `THH:MM:SS.ffffff`, `Z`. */
export const MAX_TIMESTAMP_BYTES = MAX_DATE_BYTES + 17;

const US_PER_SECOND = 1_000_000;
const SECONDS_PER_DAY = 86_400;

// Rows of a response mostly share dates: remember the last civil date computed.
let cachedDay = NaN;
let cachedYear = 0;
let cachedMonth = 0;
let cachedDate = 0;

/** Hinnant's civil_from_days into the cache, in int arithmetic (|days| < 2^31). */
function civil(days: number): void {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = ((doe - ((doe / 1460) | 0) + ((doe / 36524) | 0) - ((doe / 146096) | 0)) / 365) | 0;
  const doy = doe - (365 * yoe + ((yoe / 4) | 0) - ((yoe / 100) | 0));
  const mp = ((5 * doy + 2) / 153) | 0;
  const month = mp < 10 ? mp + 3 : mp - 9;
  cachedDate = doy - (((153 * mp + 2) / 5) | 0) + 1;
  cachedMonth = month;
  cachedYear = yoe + era * 400 + (month <= 2 ? 1 : 0);
  cachedDay = days;
}

/** `YYYY-MM-DD` (unquoted); years outside 0..9999 in ISO 8601 expanded form, ±YYYYYY. */
function putCivilDate(b: Uint8Array, p: number, days: number): number {
  if (days !== cachedDay) civil(days);
  const y = cachedYear;
  if (y >= 0 && y <= 9999) {
    p = put4(b, p, y);
  } else {
    p = putExpandedYear(b, p, y);
  }
  b[p] = 0x2d;
  put2(b, p + 1, cachedMonth);
  b[p + 3] = 0x2d;
  put2(b, p + 4, cachedDate);
  return p + 6;
}

function putExpandedYear(b: Uint8Array, p: number, y: number): number {
  b[p++] = y < 0 ? 0x2d : 0x2b;
  const text = String(Math.abs(y)).padStart(6, '0');
  for (let i = 0; i < text.length; i++) b[p + i] = text.charCodeAt(i);
  return p + text.length;
}

/** Date32 (days since epoch) as `"YYYY-MM-DD"`. */
export function putDateQuoted(b: Uint8Array, p: number, days: number): number {
  b[p] = 0x22;
  p = putCivilDate(b, p + 1, days);
  b[p] = 0x22;
  return p + 1;
}

/**
 * Whole seconds since epoch of an instant in µs, floored (pre-1970 instants round toward
 * the past, so their fraction stays non-negative). The quotient of a double division is
 * never below the true floor, but may round up onto the next integer: step back then.
 */
function floorSeconds(us: number): number {
  const s = Math.floor(us / US_PER_SECOND);
  return s * US_PER_SECOND > us ? s - 1 : s;
}

/** `"YYYY-MM-DDTHH:MM:SS` of whole seconds since epoch; the caller closes it. */
function putDateTime(b: Uint8Array, p: number, seconds: number): number {
  let days = Math.floor(seconds / SECONDS_PER_DAY);
  let rem = seconds - days * SECONDS_PER_DAY;
  if (rem < 0) {
    days -= 1;
    rem += SECONDS_PER_DAY;
  }
  b[p] = 0x22;
  p = putCivilDate(b, p + 1, days);
  const h = (rem / 3600) | 0;
  rem -= h * 3600;
  const m = (rem / 60) | 0;
  b[p] = 0x54;
  put2(b, p + 1, h);
  b[p + 3] = 0x3a;
  put2(b, p + 4, m);
  b[p + 6] = 0x3a;
  put2(b, p + 7, rem - m * 60);
  return p + 9;
}

/**
 * Beyond ±1e20 µs (±3 million years) the civil arithmetic leaves int32; no real instant is
 * there, so such values (and NaN, infinities) render as null rather than as garbage.
 */
function inRange(us: number): boolean {
  return us > -1e20 && us < 1e20;
}

function close(b: Uint8Array, p: number): number {
  b[p] = 0x5a;
  b[p + 1] = 0x22;
  return p + 2;
}

/** Instant in µs as `"YYYY-MM-DDTHH:MM:SSZ"` (Arrow unit s); null when non-finite or absurd. */
export function putIsoSecondsQuoted(b: Uint8Array, p: number, us: number): number {
  if (!inRange(us)) return putNull(b, p);
  return close(b, putDateTime(b, p, floorSeconds(us)));
}

/** Instant in µs as `"YYYY-MM-DDTHH:MM:SS.fffZ"` (Arrow unit ms), truncated toward the past. */
export function putIsoMillisQuoted(b: Uint8Array, p: number, us: number): number {
  if (!inRange(us)) return putNull(b, p);
  const s = floorSeconds(us);
  const ms = Math.floor((us - s * US_PER_SECOND) / 1000);
  p = putDateTime(b, p, s);
  const hi = (ms * 5243) >>> 19; // ⌊ms / 100⌋
  b[p] = 0x2e;
  b[p + 1] = 48 + hi;
  put2(b, p + 2, ms - hi * 100);
  return close(b, p + 4);
}

/** Instant in µs as `"YYYY-MM-DDTHH:MM:SS.ffffffZ"` (Arrow unit us). */
export function putIsoMicrosQuoted(b: Uint8Array, p: number, us: number): number {
  if (!inRange(us)) return putNull(b, p);
  const s = floorSeconds(us);
  const micros = Math.floor(us - s * US_PER_SECOND);
  p = putDateTime(b, p, s);
  const hi = (micros / 10000) | 0;
  b[p] = 0x2e;
  put2(b, p + 1, hi);
  put4(b, p + 3, micros - hi * 10000);
  return close(b, p + 7);
}
