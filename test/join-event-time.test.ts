/**
 * asof_join reads each event's `at` from the body's bytes in place (join/event-time.ts); it
 * must read exactly what `as_of` reads from text (time/instant.ts, contract 1): a date is the
 * end of that UTC day, an RFC 3339 instant with `Z` or an offset is that instant, anything else
 * is refused. Checked against the text readers over generated near-valid strings, each inside
 * other bytes so the reader must keep to [start, end).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAtBytes } from '../src/join/event-time.js';
import { dayEndUs, parseDate, parseRfc3339 } from '../src/time/instant.js';

/** What the text readers make of `s`: microseconds, or null when it is neither form. */
function textModel(s: string): number | null {
  const day = parseDate(s);
  if (day !== null) return dayEndUs(day);
  return parseRfc3339(s);
}

const pad = (n: number, w: number): string => String(n).padStart(w, '0');
const num = (lo: number, hi: number, w: number) => fc.integer({ min: lo, max: hi }).map((n) => pad(n, w));
// Years around the leap rules (divisible by 4, 100, 400) and far from them.
const year = fc.oneof(fc.constantFrom('1900', '2000', '2023', '2024', '2100', '0000', '9999', '1970'), num(0, 9999, 4));
const month = num(0, 13, 2);
const dayOfMonth = num(0, 32, 2);
const date = fc.tuple(year, month, dayOfMonth).map(([y, m, d]) => `${y}-${m}-${d}`);
const sep = fc.constantFrom('T', 't', ' ', 'x');
const clock = fc.tuple(num(0, 25, 2), num(0, 61, 2), num(0, 62, 2)).map(([h, m, s]) => `${h}:${m}:${s}`);
const frac = fc.oneof(fc.constant(''), fc.constant('.'), fc.stringMatching(/^\.[0-9]{1,11}$/));
const zone = fc.oneof(
  fc.constantFrom('Z', 'z', '', 'ZZ', '+', '+00', '+0000', 'UTC'),
  fc.tuple(fc.constantFrom('+', '-'), num(0, 25, 2), num(0, 61, 2)).map(([sg, h, m]) => `${sg}${h}:${m}`),
);
const instant = fc.tuple(date, sep, clock, frac, zone).map(([d, t, c, f, z]) => `${d}${t}${c}${f}${z}`);
/** One character replaced, dropped or doubled: the near misses a hand-written reader gets wrong. */
const mutated = fc
  .tuple(fc.oneof(date, instant), fc.nat(), fc.constantFrom('drop', 'double', 'replace'), fc.string({ minLength: 1, maxLength: 1 }))
  .map(([s, i, op, c]) => {
    const k = s.length === 0 ? 0 : i % s.length;
    if (op === 'drop') return s.slice(0, k) + s.slice(k + 1);
    if (op === 'double') return s.slice(0, k) + s[k] + s.slice(k);
    return s.slice(0, k) + c + s.slice(k + 1);
  });
const around = fc.string({ unit: fc.constantFrom('Z', 'z', '+', '-', ':', '0', '9', '.', ',', 'T', '"'), maxLength: 4 });

function readInPlace(prefix: string, s: string, suffix: string): number {
  const bytes = new TextEncoder().encode(prefix + s + suffix);
  const start = new TextEncoder().encode(prefix).length;
  return parseAtBytes(bytes, start, start + new TextEncoder().encode(s).length);
}

describe('asof_join: an event time read from bytes is the as_of read from text', () => {
  it('agrees with the text readers on generated dates, instants and their near misses, inside other bytes', () => {
    fc.assert(
      fc.property(around, fc.oneof(date, instant, mutated), around, (prefix, s, suffix) => {
        const want = textModel(s);
        const got = readInPlace(prefix, s, suffix);
        if (want === null) expect(got, s).toBeNaN();
        else expect(got, s).toBe(want);
      }),
      { numRuns: 20_000 },
    );
  });

  it('reads the cases the rules turn on', () => {
    const cases: Array<[string, number | null]> = [
      ['2024-02-29', dayEndUs(parseDate('2024-02-29')!)],
      ['2023-02-29', null],
      ['1900-02-29', null],
      ['2000-02-29', dayEndUs(parseDate('2000-02-29')!)],
      ['2024-01-01T23:59:60Z', parseRfc3339('2024-01-02T00:00:00Z')],
      ['2024-01-01T24:00:00Z', null],
      ['2024-01-01t00:00:00z', parseRfc3339('2024-01-01T00:00:00Z')],
      ['2024-01-01T00:00:00.1234567Z', parseRfc3339('2024-01-01T00:00:00.123456Z')],
      ['2024-01-01T00:00:00.Z', null],
      ['2024-01-01T00:00:00.1234567890Z', null],
      ['2024-01-01T00:00:00+23:59', parseRfc3339('2023-12-31T00:01:00Z')],
      ['2024-01-01T00:00:00-23:59', parseRfc3339('2024-01-01T23:59:00Z')],
      ['2024-01-01T00:00:00+24:00', null],
      ['2024-01-01T00:00:00+00:60', null],
      ['2024-01-01T00:00:00', null],
      // an offset's sign is + or -: any other byte before hh:mm is no offset
      ['2024-01-01T00:00:00x01:00', null],
      ['2024-01-01T00:00:00 01:00', null],
      ['2024-01-01T00:00:00.5*01:00', null],
    ];
    for (const [s, want] of cases) {
      const got = readInPlace('"', s, '",');
      if (want === null) expect(got, s).toBeNaN();
      else expect(got, s).toBe(want);
    }
  });
});
