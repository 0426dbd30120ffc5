/**
 * Instants are plain numbers: microseconds since the Unix epoch, UTC. Every stored
 * timestamp is at most microsecond precision (nanosecond columns are refused at load), and
 * microseconds until year 2255 stay below 2^53, so a double holds them exactly and
 * comparisons in the hot path stay on numbers, not BigInts.
 */
export const US_PER_SECOND = 1_000_000;
export const US_PER_DAY = 86_400 * US_PER_SECOND;

/** The last microsecond of a UTC day: `as_of=YYYY-MM-DD` means the end of that day. */
export function dayEndUs(day: number): number {
  return (day + 1) * US_PER_DAY - 1;
}

/** Days since epoch of the UTC day containing the instant. */
export function dayOfUs(us: number): number {
  return Math.floor(us / US_PER_DAY);
}

/**
 * Parses a strict `YYYY-MM-DD` calendar date (all of text, or text[start..end)) to days
 * since epoch, or null when it is not one.
 * Read by character codes: every data request parses two or three dates, and a regex match
 * allocates its result array (near-zero allocation per request: docs/decisions.md#allocation).
 */
export function parseDate(text: string, start = 0, end = text.length): number | null {
  // text[start..end) is the date: a query parameter is read where it lies in the query string
  if (end - start !== 10 || text.charCodeAt(start + 4) !== 0x2d || text.charCodeAt(start + 7) !== 0x2d) return null;
  const y = asciiDigits(text, start, 4);
  const mo = asciiDigits(text, start + 5, 2);
  const d = asciiDigits(text, start + 8, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  return daysFromCivil(y, mo, d);
}

/** The n ASCII digits at text[at..at+n) as a number, or -1 if any is not a digit (dates here, integer query parameters). */
export function asciiDigits(text: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = text.charCodeAt(i) - 0x30;
    // NaN (past the end of text) is not a digit either
    if (!(c >= 0 && c <= 9)) return -1;
    v = v * 10 + c;
  }
  return v;
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/**
 * Parses an RFC 3339 timestamp with `Z` or an offset to microseconds. Digits past the
 * microsecond are truncated: a stored value (microsecond precision at most) is <= the
 * exact instant if and only if it is <= its truncation.
 */
export function parseRfc3339(text: string): number | null {
  const m = RFC3339_RE.exec(text);
  if (m === null) return null;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  const h = Number(m[4]);
  const mi = Number(m[5]);
  const s = Number(m[6]);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo)) return null;
  if (h > 23 || mi > 59 || s > 60) return null;
  const frac = m[7] ?? '';
  const micros = frac === '' ? 0 : Number((frac + '000000').slice(0, 6));
  let offsetMin = 0;
  if (m[8] === undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // A leap second (:60) is read as the first instant of the next minute.
  const seconds = daysFromCivil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s - offsetMin * 60;
  return seconds * US_PER_SECOND + micros;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(y: number, m: number): number {
  return m === 2 ? (isLeap(y) ? 29 : 28) : MONTH_DAYS[m - 1]!;
}

/** Howard Hinnant's days_from_civil: proleptic Gregorian date to days since 1970-01-01. */
export function daysFromCivil(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** Inverse of daysFromCivil. Returns [year, month, day]. */
export function civilFromDays(z: number): [number, number, number] {
  const zz = z + 719468;
  const era = Math.floor(zz / 146097);
  const doe = zz - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

/** `YYYY-MM-DD` of a day number (cold paths; the renderer writes bytes directly). */
export function formatDate(day: number): string {
  const [y, m, d] = civilFromDays(day);
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** ISO 8601 UTC with milliseconds and `Z`, from microseconds (cold paths and logs). */
export function formatIsoMillis(us: number): string {
  return new Date(Math.floor(us / 1000)).toISOString();
}

/** ISO 8601 UTC with microseconds and `Z` (cold paths: tools, tests). */
export function formatIsoMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  const micros = us - ms * 1000;
  return new Date(ms).toISOString().replace('Z', `${String(micros).padStart(3, '0')}Z`);
}
