import { describe, expect, it } from 'vitest';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { putInt64, putInt64Halves } from '../src/format/bytes/format-number.js';
import { rng } from './support/rng.js';

const out = new ByteWriter(16);

function floatText(x: number): string {
  out.reset();
  out.float(x);
  return Buffer.from(out.view()).toString('latin1');
}

function intText(n: number): string {
  out.reset();
  out.int(n);
  return Buffer.from(out.view()).toString('latin1');
}

function int64Text(v: bigint): string {
  const b = new Uint8Array(64);
  return Buffer.from(b.subarray(0, putInt64(b, 0, v))).toString('latin1');
}

function int64HalvesText(v: bigint): string {
  const pair = new Int32Array(new BigInt64Array([v]).buffer);
  const b = new Uint8Array(64);
  return Buffer.from(b.subarray(0, putInt64Halves(b, 0, pair[1]!, pair[0]! >>> 0))).toString('latin1');
}

const JSON_NUMBER = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/;

/**
 * Checks many values, one assertion at the end (per-value expect() dominates run time).
 * JSON numbers must parse back to the same double (-0 may come back as 0).
 */
function expectRoundTrips(xs: Iterable<number>): void {
  const failures: string[] = [];
  let checked = 0;
  for (const x of xs) {
    checked++;
    const text = floatText(x);
    if (!JSON_NUMBER.test(text) || (JSON.parse(text) as number) !== x) failures.push(`${x} -> ${text}`);
  }
  expect(checked).toBeGreaterThan(0);
  expect(failures).toEqual([]);
}

describe('float rendering round-trips exactly', () => {
  it('round-trips random bit patterns (subnormals, huge, tiny, negative)', () => {
    const r = rng(1);
    const bits = new Uint32Array(2);
    const f = new Float64Array(bits.buffer);
    const xs: number[] = [];
    for (let i = 0; i < 20000; i++) {
      bits[0] = r() * 2 ** 32;
      bits[1] = r() * 2 ** 32;
      if (Number.isFinite(f[0]!)) xs.push(f[0]!);
    }
    expect(xs.filter((x) => x !== 0 && Math.abs(x) < 2.2250738585072014e-308).length).toBeGreaterThan(0);
    expectRoundTrips(xs);
  });

  it('round-trips short decimals like 0.1, 123.4567 and -2.25', () => {
    const r = rng(2);
    const xs = [0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 123.4567, -2.25, 1e-7, 1.5e-6, 4.35, 0.000001];
    for (let i = 0; i < 20000; i++) xs.push((Math.floor(r() * 2e9) - 1e9) / 10 ** Math.floor(r() * 12));
    expectRoundTrips(xs);
  });

  it('round-trips random scaled doubles across magnitudes', () => {
    const r = rng(3);
    const xs: number[] = [];
    for (let i = 0; i < 20000; i++) xs.push((r() - 0.5) * 10 ** Math.floor(r() * 40 - 20));
    expectRoundTrips(xs);
  });

  it('round-trips Float32 values widened to double', () => {
    const r = rng(4);
    const f32 = new Float32Array(1);
    const u32 = new Uint32Array(f32.buffer);
    const xs = [Math.fround(0.1), Math.fround(1.1), Math.fround(3.4e38)];
    for (let i = 0; i < 20000; i++) {
      if (i % 2 === 0) u32[0] = r() * 2 ** 32;
      else f32[0] = (r() - 0.5) * 10 ** Math.floor(r() * 12 - 6);
      if (Number.isFinite(f32[0]!)) xs.push(f32[0]!);
    }
    expectRoundTrips(xs);
  });

  it('round-trips the extremes', () => {
    expectRoundTrips([
      Number.MIN_VALUE,
      -Number.MIN_VALUE,
      2.2250738585072014e-308,
      Number.MAX_VALUE,
      -Number.MAX_VALUE,
      Number.MAX_SAFE_INTEGER,
      2 ** 53,
      2 ** 53 + 2,
      1e21,
      1e300,
      Number.EPSILON,
      0,
      1,
      -1,
    ]);
  });

  it('writes the shortest digits, as Number.prototype.toString does (nearest, ties to even)', () => {
    const r = rng(9);
    const bits = new Uint32Array(2);
    const f = new Float64Array(bits.buffer);
    const failures: string[] = [];
    for (let i = 0; i < 30000; i++) {
      if (i % 3 === 0) {
        bits[0] = r() * 2 ** 32;
        bits[1] = r() * 2 ** 32;
      } else if (i % 3 === 1) {
        f[0] = r() * 10 ** Math.floor(r() * 24 - 7);
      } else {
        f[0] = Math.fround(r() * 10 ** Math.floor(r() * 12 - 4));
      }
      const x = f[0]!;
      if (!Number.isFinite(x)) continue;
      const want = Object.is(x, -0) ? '0' : String(x);
      if (floatText(x) !== want) failures.push(`${want} -> ${floatText(x)}`);
    }
    // Exact doubles halfway between two 17-digit decimals: the even one must win (…1101.312).
    for (const x of [25818276481101 + 0.3125, 207394994133570 + 0.625, 956383712610901 + 0.25]) {
      if (floatText(x) !== String(x)) failures.push(`${String(x)} -> ${floatText(x)}`);
    }
    expect(failures).toEqual([]);
  });

  it('writes short decimals in plain fixed notation', () => {
    expect(floatText(0.1)).toBe('0.1');
    expect(floatText(-2.25)).toBe('-2.25');
    expect(floatText(100)).toBe('100');
    expect(floatText(1.05)).toBe('1.05');
    expect(floatText(0.000123)).toBe('0.000123');
  });

  it('drops exactly the trailing zeros of 1 to 6 decimals, as Number.prototype.toString does', () => {
    // Every shape of the last six digits: k·10^-d for d = 1..6 and k with 0..5 trailing zeros.
    const xs: number[] = [];
    for (let d = 1; d <= 6; d++) {
      for (const k of [1, 7, 10, 12, 100, 120, 1000, 1230, 10000, 12300, 100000, 123456, 999999, 1000001, 4200000]) xs.push(k / 10 ** d, -(k / 10 ** d) - 3);
    }
    expect(xs.map(floatText)).toEqual(xs.map((x) => String(x)));
  });

  it('renders NaN and infinities as null, -0 as 0', () => {
    expect(floatText(NaN)).toBe('null');
    expect(floatText(Infinity)).toBe('null');
    expect(floatText(-Infinity)).toBe('null');
    expect(floatText(-0)).toBe('0');
  });
});

describe('integer rendering', () => {
  it('writes integers up to 2^53 in magnitude exactly', () => {
    const r = rng(6);
    for (const n of [0, 1, -1, 9, 10, -10, 127, -128, 255, 65535, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 32 - 1, 2 ** 53, -(2 ** 53)]) {
      expect(intText(n)).toBe(BigInt(n).toString());
    }
    const failures: string[] = [];
    for (let i = 0; i < 5000; i++) {
      const n = Math.floor((r() - 0.5) * 2 ** Math.floor(r() * 54));
      if (intText(n) !== BigInt(n).toString()) failures.push(`${n} -> ${intText(n)}`);
    }
    expect(failures).toEqual([]);
  });
});

describe('Int64 rendering: numbers up to 2^53, strings beyond', () => {
  const LIMIT = 2n ** 53n;
  const cases = [
    0n,
    1n,
    -1n,
    2n ** 31n,
    -(2n ** 31n),
    2n ** 32n - 1n,
    2n ** 32n,
    -(2n ** 32n),
    -(2n ** 32n) + 1n,
    LIMIT - 1n,
    LIMIT,
    LIMIT + 1n,
    -LIMIT + 1n,
    -LIMIT,
    -LIMIT - 1n,
    2n ** 63n - 1n,
    -(2n ** 63n),
  ];

  function expected(v: bigint): string {
    const abs = v < 0n ? -v : v;
    return abs <= LIMIT ? v.toString() : `"${v.toString()}"`;
  }

  it('renders each boundary case as the rule says, on both paths', () => {
    for (const v of cases) {
      expect(int64Text(v), v.toString()).toBe(expected(v));
      expect(int64HalvesText(v), v.toString()).toBe(expected(v));
    }
    expect(JSON.parse(int64Text(LIMIT))).toBe(2 ** 53);
    expect(JSON.parse(int64Text(LIMIT + 1n))).toBe('9007199254740993');
  });

  it('follows the rule on random values of every magnitude, on both paths', () => {
    const r = rng(8);
    const failures: string[] = [];
    for (let i = 0; i < 5000; i++) {
      // Magnitudes spread over every bit length, so both sides of 2^53 are well covered.
      const hi = BigInt(Math.floor(r() * 2 ** 32)) - 2n ** 31n;
      const lo = BigInt(Math.floor(r() * 2 ** 32));
      const v = BigInt.asIntN(64, (hi << BigInt(Math.floor(r() * 33))) + lo);
      if (int64HalvesText(v) !== expected(v) || int64Text(v) !== expected(v)) failures.push(v.toString());
    }
    expect(failures).toEqual([]);
  });
});
