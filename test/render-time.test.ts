import { describe, expect, it } from 'vitest';
import {
  MAX_DATE_BYTES,
  MAX_TIMESTAMP_BYTES,
  putDateQuoted,
  putIsoMicrosAt,
  putIsoMicrosQuoted,
  putIsoMillisAt,
  putIsoMillisQuoted,
  putIsoSecondsAt,
  putIsoSecondsQuoted,
} from '../src/format/bytes/format-time.js';
import { rng } from './support/rng.js';

type Put = (b: Uint8Array, p: number, v: number) => number;

const scratch = new Uint8Array(64);
function text(put: Put, v: number): string {
  return Buffer.from(scratch.subarray(0, put(scratch, 0, v))).toString('latin1');
}

// Expected values come from Date (floor-based on milliseconds, correct before 1970).
const US_PER_MS = 1000;
function floorDiv(a: number, b: number): number {
  return Math.floor(a / b);
}
function isoSecondsOf(us: number): string {
  return new Date(floorDiv(us, US_PER_MS)).toISOString().slice(0, 19);
}
const expectSeconds = (us: number): string => `"${isoSecondsOf(us)}Z"`;
const expectMillis = (us: number): string => `"${new Date(floorDiv(us, US_PER_MS)).toISOString()}"`;
const expectMicros = (us: number): string => {
  const micros = Number(((BigInt(us) % 1_000_000n) + 1_000_000n) % 1_000_000n);
  return `"${isoSecondsOf(us)}.${String(micros).padStart(6, '0')}Z"`;
};
const expectDate = (days: number): string => `"${new Date(days * 86_400_000).toISOString().slice(0, -14)}"`;

function mismatches(put: Put, want: (v: number) => string, vs: number[]): string[] {
  return vs.filter((v) => text(put, v) !== want(v)).map((v) => `${v}: ${text(put, v)} != ${want(v)}`);
}

const US_PER_DAY = 86_400_000_000;
const EDGE_US = [
  0,
  -1,
  1,
  999_999,
  1_000_000,
  -999_999,
  -1_000_000,
  -1_000_001,
  -US_PER_DAY,
  -US_PER_DAY - 1,
  US_PER_DAY - 1,
  Date.UTC(2024, 1, 29, 23, 59, 59) * 1000 + 999_999, // leap day
  Date.UTC(2000, 1, 29, 12) * 1000 + 123_456, // 400-year leap day
  Date.UTC(1900, 2, 1) * 1000 - 1, // 1900-02-28: 1900 is not a leap year
  Date.UTC(1969, 11, 31, 23, 59, 59) * 1000 + 500_000,
  Date.UTC(1600, 0, 1) * 1000 - 1,
  Date.UTC(2255, 5, 5, 5, 5, 5) * 1000 + 5,
  Date.UTC(9999, 11, 31, 23, 59, 59) * 1000, // past 2^53 µs, still a whole-second double
];

function randomInstants(seed: number, n: number): number[] {
  const r = rng(seed);
  const lo = Date.UTC(1600, 0, 1) * 1000;
  const hi = Date.UTC(2400, 0, 1) * 1000;
  return Array.from({ length: n }, () => Math.floor(lo + r() * (hi - lo)));
}

describe('timestamps render at the precision of their Arrow unit', () => {
  const instants = [...EDGE_US, ...randomInstants(1, 5000)];

  it('unit s: YYYY-MM-DDTHH:MM:SSZ, floored before 1970', () => {
    expect(text(putIsoSecondsQuoted, -1)).toBe('"1969-12-31T23:59:59Z"');
    expect(mismatches(putIsoSecondsQuoted, expectSeconds, instants)).toEqual([]);
  });

  it('unit ms: three fraction digits', () => {
    expect(text(putIsoMillisQuoted, -1)).toBe('"1969-12-31T23:59:59.999Z"');
    expect(text(putIsoMillisQuoted, Date.UTC(2024, 1, 29) * 1000 + 7000)).toBe('"2024-02-29T00:00:00.007Z"');
    expect(mismatches(putIsoMillisQuoted, expectMillis, instants)).toEqual([]);
  });

  it('unit us: six fraction digits', () => {
    expect(text(putIsoMicrosQuoted, -1)).toBe('"1969-12-31T23:59:59.999999Z"');
    expect(text(putIsoMicrosQuoted, 1)).toBe('"1970-01-01T00:00:00.000001Z"');
    expect(mismatches(putIsoMicrosQuoted, expectMicros, instants)).toEqual([]);
  });

  it('floors the seconds of instants so large that the division rounds up onto the next second', () => {
    // Doubles this size are whole µs far apart; µs / 10^6 rounds up onto an integer for these
    // (found by search), so the writer must step back. Expected text from exact BigInt division.
    for (const us of [4570881896150999600, -1148153621497000100, -2238721138569000200]) {
      expect(Math.floor(us / 1e6) * 1e6).toBeGreaterThan(us);
      const exact = BigInt(us);
      const seconds = exact / 1_000_000n - (exact % 1_000_000n < 0n ? 1n : 0n);
      const iso = new Date(Number(seconds) * 1000).toISOString().slice(0, -5);
      expect(text(putIsoSecondsQuoted, us)).toBe(`"${iso}Z"`);
      // Past 2^53 µs (the year 2255) a double holds no exact microsecond to begin with; the
      // fraction is only checked to stay within its second.
      expect(text(putIsoMicrosQuoted, us)).toMatch(new RegExp(`^"${iso.replace('+', '\\+')}\\.\\d{6}Z"$`));
      expect(text(putIsoMillisQuoted, us)).toMatch(new RegExp(`^"${iso.replace('+', '\\+')}\\.\\d{3}Z"$`));
    }
  });

  it('stays within MAX_TIMESTAMP_BYTES, the room a row writer reserves, out to ±1e20 µs', () => {
    const widest = Math.max(...[...instants, 9.99e19, -9.99e19, -1e19].map((us) => text(putIsoMicrosQuoted, us).length));
    expect(widest).toBeLessThanOrEqual(MAX_TIMESTAMP_BYTES);
    expect(text(putIsoMicrosQuoted, -9.99e19).length).toBeGreaterThan(MAX_TIMESTAMP_BYTES - 4);
  });

  it('floors a fractional microsecond instead of rounding into the next second', () => {
    expect(text(putIsoMicrosQuoted, 999_999.75)).toBe('"1970-01-01T00:00:00.999999Z"');
    expect(text(putIsoMillisQuoted, 999_999.75)).toBe('"1970-01-01T00:00:00.999Z"');
  });

  it('renders NaN, infinities and instants beyond ±1e20 µs as null', () => {
    for (const put of [putIsoSecondsQuoted, putIsoMillisQuoted, putIsoMicrosQuoted]) {
      for (const v of [NaN, Infinity, -Infinity, 1e20, -1e20]) expect(text(put, v)).toBe('null');
      expect(text(put, 9.9e19)).not.toBe('null');
      expect(text(put, -9.9e19)).not.toBe('null');
    }
  });

  it('cell writers read the instant from its column (values, row) and write the same text', () => {
    // The row writers call the *At forms so that no double crosses a call (format-time.ts `arg`).
    const values = Float64Array.from([...instants, NaN, Infinity, -1e20, 9.9e19]);
    const pairs: [Put, (b: Uint8Array, p: number, v: Float64Array, row: number) => number][] = [
      [putIsoSecondsQuoted, putIsoSecondsAt],
      [putIsoMillisQuoted, putIsoMillisAt],
      [putIsoMicrosQuoted, putIsoMicrosAt],
    ];
    for (const [byValue, byRow] of pairs) {
      const differ: string[] = [];
      for (let row = 0; row < values.length; row++) {
        const at = Buffer.from(scratch.subarray(0, byRow(scratch, 0, values, row))).toString('latin1');
        if (at !== text(byValue, values[row]!)) differ.push(`${values[row]}: ${at}`);
      }
      expect(differ).toEqual([]);
    }
    expect(Buffer.from(scratch.subarray(3, putIsoMicrosAt(scratch, 3, values, 1))).toString('latin1')).toBe('"1969-12-31T23:59:59.999999Z"');
  });
});

describe('Date32 renders as "YYYY-MM-DD"', () => {
  it('matches the civil calendar on edges, leap days and random days', () => {
    const r = rng(2);
    const days = [0, -1, 1, 19782, 11016, -25508, -719528, -719529, 2932896, 2932897, -100_000_000, 100_000_000];
    for (let i = 0; i < 5000; i++) days.push(Math.floor((r() - 0.5) * 400_000));
    expect(text(putDateQuoted, 19782)).toBe('"2024-02-29"');
    expect(text(putDateQuoted, -1)).toBe('"1969-12-31"');
    expect(mismatches(putDateQuoted, expectDate, days)).toEqual([]);
  });

  it('uses the ISO expanded year outside 0000..9999', () => {
    expect(text(putDateQuoted, -719529)).toBe('"-000001-12-31"');
    expect(text(putDateQuoted, 2932897)).toBe('"+010000-01-01"');
  });

  it('renders the extreme int32 days without overrunning its reserved room', () => {
    for (const d of [2 ** 31 - 1, -(2 ** 31)]) {
      const s = text(putDateQuoted, d);
      expect(s.length).toBeLessThanOrEqual(MAX_DATE_BYTES);
      expect(s).toMatch(/^"[+-]\d{6,7}-\d\d-\d\d"$/);
    }
  });
});
