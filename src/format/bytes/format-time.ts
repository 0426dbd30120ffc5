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

/**
 * Civil dates already written, direct-mapped by day number: the timestamps of one response
 * fall on a few thousand days at most, so almost every cell copies its `YYYY-MM-DD` from here
 * instead of running the calendar arithmetic. Only years 0..9999 are kept (fixed 10 bytes).
 */
const DAY_SLOTS = 4096;
const dayTag = new Float64Array(DAY_SLOTS).fill(NaN);
const dayText = new Uint8Array(DAY_SLOTS * 10);

/** `HH:MM` of every minute of a day (7 KB). */
const HH_MM = new Uint8Array(1440 * 5);
for (let m = 0; m < 1440; m++) {
  put2(HH_MM, m * 5, Math.floor(m / 60));
  HH_MM[m * 5 + 2] = 0x3a;
  put2(HH_MM, m * 5 + 3, m % 60);
}

/** Hinnant's civil_from_days in int arithmetic (|days| < 2^31); runs only when a day is not cached. */
function civil(days: number): { y: number; m: number; d: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = ((doe - ((doe / 1460) | 0) + ((doe / 36524) | 0) - ((doe / 146096) | 0)) / 365) | 0;
  const doy = doe - (365 * yoe + ((yoe / 4) | 0) - ((yoe / 100) | 0));
  const mp = ((5 * doy + 2) / 153) | 0;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return { y: yoe + era * 400 + (m <= 2 ? 1 : 0), m, d: doy - (((153 * mp + 2) / 5) | 0) + 1 };
}

/** Offset of day's `YYYY-MM-DD` in dayText, or -1 when its year is outside 0..9999. */
function dayOffset(days: number): number {
  const slot = days & (DAY_SLOTS - 1);
  const o = slot * 10;
  if (dayTag[slot] === days) return o;
  const { y, m, d } = civil(days);
  if (y < 0 || y > 9999) return -1;
  put4(dayText, o, y);
  dayText[o + 4] = 0x2d;
  put2(dayText, o + 5, m);
  dayText[o + 7] = 0x2d;
  put2(dayText, o + 8, d);
  dayTag[slot] = days;
  return o;
}

/** `YYYY-MM-DD` (unquoted); years outside 0..9999 in ISO 8601 expanded form, ±YYYYYY. */
export function putCivilDate(b: Uint8Array, p: number, days: number): number {
  const o = dayOffset(days);
  if (o >= 0) {
    const t = dayText;
    b[p] = t[o]!;
    b[p + 1] = t[o + 1]!;
    b[p + 2] = t[o + 2]!;
    b[p + 3] = t[o + 3]!;
    b[p + 4] = t[o + 4]!;
    b[p + 5] = t[o + 5]!;
    b[p + 6] = t[o + 6]!;
    b[p + 7] = t[o + 7]!;
    b[p + 8] = t[o + 8]!;
    b[p + 9] = t[o + 9]!;
    return p + 10;
  }
  const { y, m, d } = civil(days);
  p = putExpandedYear(b, p, y);
  b[p] = 0x2d;
  put2(b, p + 1, m);
  b[p + 3] = 0x2d;
  put2(b, p + 4, d);
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
 * The instant being written, handed to the writers below through memory, not as an
 * argument: a double passed to a call V8 does not inline is boxed into a fresh HeapNumber
 * (instants in µs, and in seconds past 2^30, are never small integers). The generated row
 * writer runs out of inlining budget on wide rows, so three timestamp cells a row were
 * three HeapNumbers a row: 93 KB of a 10,000-row page's 97 KB (docs/decisions.md#allocation). Only small
 * integers (a day number, a second of the day) cross a call from here.
 */
const arg = new Float64Array(1);

/** `"YYYY-MM-DDTHH:MM:SS` of a day number and a second of that day; the caller closes it. */
function putDateTime(b: Uint8Array, p: number, days: number, secondOfDay: number): number {
  b[p] = 0x22;
  p = putCivilDate(b, p + 1, days);
  const minute = (secondOfDay / 60) | 0;
  const h = minute * 5;
  b[p] = 0x54;
  b[p + 1] = HH_MM[h]!;
  b[p + 2] = HH_MM[h + 1]!;
  b[p + 3] = HH_MM[h + 2]!;
  b[p + 4] = HH_MM[h + 3]!;
  b[p + 5] = HH_MM[h + 4]!;
  b[p + 6] = 0x3a;
  put2(b, p + 7, secondOfDay - minute * 60);
  return p + 9;
}

function close(b: Uint8Array, p: number): number {
  b[p] = 0x5a;
  b[p + 1] = 0x22;
  return p + 2;
}

/**
 * arg[0], an instant in µs, as `"YYYY-MM-DDTHH:MM:SS` + (digits > 0: `.` and that many
 * fraction digits, 3 or 6, truncated toward the past) + `Z"`; null when non-finite or
 * beyond ±1e20 µs (±3 million years, where the civil arithmetic would leave int32: no real
 * instant is there, so such values render as null rather than as garbage).
 *
 * Whole seconds are floored, so pre-1970 instants keep a non-negative fraction. The
 * quotient of a double division is never below the true floor but may round up onto the
 * next integer: step back then.
 */
function putInstantIn(b: Uint8Array, p: number, digits: 0 | 3 | 6): number {
  const us = arg[0]!;
  if (!(us > -1e20 && us < 1e20)) return putNull(b, p);
  let seconds = Math.floor(us / US_PER_SECOND);
  if (seconds * US_PER_SECOND > us) seconds -= 1;
  const micros = Math.floor(us - seconds * US_PER_SECOND);
  // Exact here, unlike the step above: seconds is an integer below 1e14, so its true
  // quotient lies at least 1/86400 from the next integer, far more than half an ulp of it.
  const days = Math.floor(seconds / SECONDS_PER_DAY);
  const secondOfDay = seconds - days * SECONDS_PER_DAY;
  p = putDateTime(b, p, days, secondOfDay);
  if (digits === 6) {
    const hi = (micros / 10000) | 0;
    b[p] = 0x2e;
    put2(b, p + 1, hi);
    put4(b, p + 3, micros - hi * 10000);
    p += 7;
  } else if (digits === 3) {
    const ms = (micros / 1000) | 0;
    const hi = (ms * 5243) >>> 19; // ⌊ms / 100⌋
    b[p] = 0x2e;
    b[p + 1] = 48 + hi;
    put2(b, p + 2, ms - hi * 100);
    p += 4;
  }
  return close(b, p);
}

/** Instant in µs as `"YYYY-MM-DDTHH:MM:SSZ"` (Arrow unit s); null when non-finite or absurd. */
export function putIsoSecondsQuoted(b: Uint8Array, p: number, us: number): number {
  arg[0] = us;
  return putInstantIn(b, p, 0);
}

/** Instant in µs as `"YYYY-MM-DDTHH:MM:SS.fffZ"` (Arrow unit ms), truncated toward the past. */
export function putIsoMillisQuoted(b: Uint8Array, p: number, us: number): number {
  arg[0] = us;
  return putInstantIn(b, p, 3);
}

/** Instant in µs as `"YYYY-MM-DDTHH:MM:SS.ffffffZ"` (Arrow unit us). */
export function putIsoMicrosQuoted(b: Uint8Array, p: number, us: number): number {
  arg[0] = us;
  return putInstantIn(b, p, 6);
}

/** putIsoSecondsQuoted of values[row], for the cell writers: the double is read here, never passed (see `arg`). */
export function putIsoSecondsAt(b: Uint8Array, p: number, values: Float64Array, row: number): number {
  arg[0] = values[row]!;
  return putInstantIn(b, p, 0);
}

/** putIsoMillisQuoted of values[row] (see putIsoSecondsAt). */
export function putIsoMillisAt(b: Uint8Array, p: number, values: Float64Array, row: number): number {
  arg[0] = values[row]!;
  return putInstantIn(b, p, 3);
}

/** putIsoMicrosQuoted of values[row] (see putIsoSecondsAt). */
export function putIsoMicrosAt(b: Uint8Array, p: number, values: Float64Array, row: number): number {
  arg[0] = values[row]!;
  return putInstantIn(b, p, 6);
}
