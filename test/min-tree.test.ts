import { describe, expect, it } from 'vitest';
import { MinTree } from '../src/store/min-tree.js';
import { rng } from './support/rng.js';

describe('MinTree.rightmostAtMost', () => {
  it('agrees with a linear scan on random arrays, ranges and thresholds', () => {
    const r = rng(7);
    for (const n of [0, 1, 2, 15, 16, 17, 255, 256, 257, 4097, 20000]) {
      const a = new Float64Array(n);
      for (let i = 0; i < n; i++) a[i] = r() < 0.05 ? -Infinity : Math.floor(r() * 1000);
      const tree = new MinTree(a);
      for (let q = 0; q < 400; q++) {
        const lo = Math.floor(r() * (n + 2)) - 1;
        const hi = Math.floor(r() * (n + 2)) - 1;
        const t = r() < 0.1 ? -Infinity : Math.floor(r() * 1100) - 50;
        let want = -1;
        for (let i = Math.min(hi, n - 1); i >= Math.max(lo, 0); i--) {
          if (a[i]! <= t) {
            want = i;
            break;
          }
        }
        expect(tree.rightmostAtMost(lo, hi, t), `n=${n} lo=${lo} hi=${hi} t=${t}`).toBe(want);
      }
    }
  });

  it('finds a lone match far below hi without scanning (sparse matches)', () => {
    const n = 100_000;
    const a = new Float64Array(n).fill(10);
    a[3] = 1;
    const tree = new MinTree(a);
    expect(tree.rightmostAtMost(0, n - 1, 5)).toBe(3);
    expect(tree.rightmostAtMost(4, n - 1, 5)).toBe(-1);
    expect(tree.rightmostAtMost(3, 3, 5)).toBe(3);
  });
});
