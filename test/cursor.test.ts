/**
 * The cursor token's defences, each on its own (query/cursor.ts): its shape (55 base64url
 * characters and nothing else), its version byte, its checksum, and the bounds of what it
 * carries (offset and total whole, 0 <= offset <= total, a series index >= 0). Each test
 * forges a token that passes every other layer, so it fails when its layer alone is
 * removed. The query hash a token carries is checked by the server against the query it
 * comes with: test/contract-pagination.test.ts ("a cursor of another query").
 */
import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, type CursorState } from '../src/query/cursor.js';
import { fnv1a } from '../src/query/hash.js';

const STATE: CursorState = {
  generation: 0xfedc_ba98,
  fingerprint: 0x89ab_cdef,
  lastDate: -20_000,
  lastSeries: 70_000,
  lastExtra: -3,
  offset: 2 ** 40,
  total: 2 ** 52,
};

/** The layout of query/cursor.ts, written out here: version, generation, fingerprint, date, series, extra, offset, total, checksum. */
function forge(fields: Partial<CursorState> & { version?: number }, fixSum = true): string {
  const c = { ...STATE, ...fields };
  const b = Buffer.alloc(41);
  b.writeUInt8(fields.version ?? 2, 0);
  b.writeUInt32LE(c.generation >>> 0, 1);
  b.writeUInt32LE(c.fingerprint >>> 0, 5);
  b.writeInt32LE(c.lastDate, 9);
  b.writeInt32LE(c.lastSeries, 13);
  b.writeInt32LE(c.lastExtra, 17);
  b.writeDoubleLE(c.offset, 21);
  b.writeDoubleLE(c.total, 29);
  if (fixSum) b.writeUInt32LE(fnv1a(b.toString('latin1', 0, 37), 0x9e3779b9), 37);
  return b.toString('base64url');
}

describe('cursor tokens', () => {
  it('round-trip every field, at the ends of their ranges; the layout is the one written out here', () => {
    const token = encodeCursor(STATE);
    expect(token).toBe(forge({}));
    expect(token).toMatch(/^[A-Za-z0-9_-]{55}$/);
    expect(decodeCursor(token)).toEqual(STATE);
    const low: CursorState = { generation: 0, fingerprint: 0, lastDate: -2147483648, lastSeries: 0, lastExtra: 2147483647, offset: 0, total: 0 };
    expect(decodeCursor(encodeCursor(low))).toEqual(low);
    const top = { ...low, generation: 0xffff_ffff, fingerprint: 0xffff_ffff, offset: 2 ** 53 - 1, total: 2 ** 53 - 1 };
    expect(decodeCursor(encodeCursor(top))).toEqual(top);
  });

  // Tokens are made inside the tests, never while collecting them: Stryker counts a file that fails to collect as no failure.
  describe('shape: 55 characters of base64url, nothing around them', () => {
    it.each([
      ['one character short', (t: string) => t.slice(0, 54)],
      ['one character long', (t: string) => `${t}A`],
      ['padded', (t: string) => `${t}=`],
      ['a space before', (t: string) => ` ${t}`],
      ['a newline after', (t: string) => `${t}\n`],
      ['empty', () => ''],
    ])('%s: refused', (_, mangle) => {
      const token = encodeCursor(STATE);
      expect(decodeCursor(token)).toEqual(STATE);
      expect(decodeCursor(mangle(token))).toBeNull();
    });

    it("base64's own characters (+ and /) are refused, though Node decodes them as - and _", () => {
      // A token with both url-safe characters (found by trying generations).
      let t = '';
      for (let g = 0; !(t.includes('-') && t.includes('_')); g++) t = encodeCursor({ ...STATE, generation: g });
      expect(decodeCursor(t)).not.toBeNull();
      const plus = t.replace('-', '+');
      const slash = t.replace('_', '/');
      expect(Buffer.from(plus, 'base64url')).toEqual(Buffer.from(t, 'base64url'));
      expect(Buffer.from(slash, 'base64url')).toEqual(Buffer.from(t, 'base64url'));
      expect(decodeCursor(plus)).toBeNull();
      expect(decodeCursor(slash)).toBeNull();
      expect(decodeCursor(t.replace('-', '.'))).toBeNull();
    });
  });

  it('version: a token of another layout version is refused, checksum and all', () => {
    expect(decodeCursor(forge({ version: 2 }))).toEqual(STATE);
    expect(decodeCursor(forge({ version: 1 }))).toBeNull();
    expect(decodeCursor(forge({ version: 3 }))).toBeNull();
  });

  it('checksum: any byte changed without it is refused', () => {
    expect(decodeCursor(forge({ generation: 7 }))).not.toBeNull();
    expect(decodeCursor(forge({ generation: 7 }, false))).toBeNull();
    const b = Buffer.from(encodeCursor(STATE), 'base64url');
    for (const at of [1, 5, 9, 13, 17, 21, 29, 37, 40]) {
      const c = Buffer.from(b);
      c[at]! ^= 0x10;
      expect(decodeCursor(c.toString('base64url')), `byte ${at}`).toBeNull();
    }
  });

  describe('bounds: a well-formed token whose position cannot be one the server wrote', () => {
    it.each([
      ['offset below 0', { offset: -1, total: 10 }],
      ['offset past total', { offset: 11, total: 10 }],
      ['offset not whole', { offset: 1.5, total: 10 }],
      ['offset not a number', { offset: NaN, total: 10 }],
      ['total not whole', { offset: 1, total: 10.5 }],
      ['total past 2^53', { offset: 1, total: 2 ** 53 }],
      ['total infinite', { offset: 1, total: Infinity }],
      ['series below 0', { offset: 1, total: 10, lastSeries: -1 }],
    ])('%s: refused', (_, fields) => {
      expect(decodeCursor(forge(fields))).toBeNull();
    });

    it.each([
      ['offset 0', { offset: 0, total: 10 }],
      ['offset = total', { offset: 10, total: 10 }],
      ['series 0', { offset: 1, total: 10, lastSeries: 0 }],
      ['total 2^53 - 1', { offset: 2 ** 53 - 1, total: 2 ** 53 - 1 }],
    ])('%s: taken', (_, fields) => {
      expect(decodeCursor(forge(fields))).toEqual({ ...STATE, ...fields });
    });
  });
});
