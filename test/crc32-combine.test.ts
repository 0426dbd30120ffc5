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

  it('random lengths, one instance reused, three-part chains', () => {
    const next = rng(7);
    const combiner = new Crc32Combiner();
    for (let i = 0; i < 60; i++) {
      const parts = [0, 1, 2].map(() => bytes(next, Math.floor(next() ** 3 * 300_000)));
      const [a, b, c] = parts as [Buffer, Buffer, Buffer];
      const ab = combiner.combine(crc(a), crc(b), b.length);
      expect(combiner.combine(ab, crc(c), c.length)).toBe(crc(Buffer.concat(parts)));
    }
  });

  it('lengths past 2^32 (too large to hash here) agree with splitting them: combine is associative', () => {
    // crc(A+B+C) either way (non-empty parts: an empty one has CRC 0, not any value): combine(combine(a, b, |B|), c, |C|) = combine(a, combine(b, c, |C|), |B| + |C|).
    const next = rng(99);
    const combiner = new Crc32Combiner();
    for (let i = 0; i < 200; i++) {
      const [a, b, c] = [0, 1, 2].map(() => Math.floor(next() * 2 ** 32));
      const lb = 1 + Math.floor(next() * 2 ** (1 + 51 * next()));
      const lc = 1 + Math.floor(next() * 2 ** (1 + 51 * next()));
      expect(combiner.combine(combiner.combine(a!, b!, lb), c!, lc), `${lb} + ${lc}`).toBe(combiner.combine(a!, combiner.combine(b!, c!, lc), lb + lc));
    }
  });

  it('an empty second part leaves the first CRC as it is', () => {
    const a = bytes(rng(3), 1000);
    expect(new Crc32Combiner().combine(crc(a), 0, 0)).toBe(crc(a));
  });
});
