import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Crc32Combiner } from '../src/format/crc32-combine.js';
import { rng } from './support/rng.js';

/** Random bytes from a seeded generator (reproducible failures). */
function bytes(next: () => number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(next() * 256);
  return b;
}

/** zlib.crc32 from its initial state (0 for an empty buffer, as CRC-32 defines it). */
const crc = (b: Buffer): number => zlib.crc32(b) >>> 0;

describe('Crc32Combiner (crc32_combine, GF(2) matrices)', () => {
  it('combines the CRC-32s of two parts into zlib.crc32 of their concatenation, for lengths 0, 1, small, > 2^16', () => {
    const next = rng(20261125);
    const combiner = new Crc32Combiner();
    const lengths = [0, 1, 2, 3, 7, 8, 255, 256, 4095, 65_535, 65_536, 65_537, 200_003];
    for (const la of lengths)
      for (const lb of lengths) {
        const a = bytes(next, la);
        const b = bytes(next, lb);
        expect(combiner.combine(crc(a), crc(b), lb), `${la} + ${lb}`).toBe(crc(Buffer.concat([a, b])));
      }
  });

  it('random lengths, and one instance reused for three-part chains (its scratch holds nothing over)', () => {
    const next = rng(7);
    const combiner = new Crc32Combiner();
    for (let i = 0; i < 60; i++) {
      const parts = [0, 1, 2].map(() => bytes(next, Math.floor(next() ** 3 * 300_000)));
      const [a, b, c] = parts as [Buffer, Buffer, Buffer];
      const ab = combiner.combine(crc(a), crc(b), b.length);
      expect(combiner.combine(ab, crc(c), c.length)).toBe(crc(Buffer.concat(parts)));
    }
  });

  it('an empty second part leaves the first CRC as it is', () => {
    const a = bytes(rng(3), 1000);
    expect(new Crc32Combiner().combine(crc(a), 0, 0)).toBe(crc(a));
  });
});
