import { describe, expect, it } from 'vitest';
import { RestBuffers } from '../src/http/rest-buffers.js';

const bytes = (n: number, v: number): Uint8Array => new Uint8Array(n).fill(v);

describe('RestBuffers (pooled copies of large bodies awaiting a slow reader)', () => {
  it('copies the bytes, and hands a released buffer out again instead of allocating', () => {
    const pool = new RestBuffers(8 << 20);
    const a = pool.take(bytes(300_000, 7));
    expect(a.length).toBeGreaterThanOrEqual(300_000);
    expect(a.subarray(0, 300_000).every((b) => b === 7)).toBe(true);
    pool.release(a);
    expect(pool.keptBytes).toBe(a.length);
    const b = pool.take(bytes(200_000, 9));
    expect(b).toBe(a);
    expect(b.subarray(0, 200_000).every((x) => x === 9)).toBe(true);
    expect(pool.keptBytes).toBe(0);
  });

  it('never hands one buffer to two answers at once, and picks the smallest free one that fits', () => {
    const pool = new RestBuffers(8 << 20);
    const big = pool.take(bytes(1_000_000, 1));
    const small = pool.take(bytes(100_000, 2));
    expect(small).not.toBe(big);
    expect(big.subarray(0, 1_000_000).every((x) => x === 1)).toBe(true);
    pool.release(big);
    pool.release(small);
    expect(pool.take(bytes(90_000, 3))).toBe(small);
    expect(pool.take(bytes(90_000, 4))).toBe(big);
    // Nothing free fits: a new buffer.
    const fresh = pool.take(bytes(90_000, 5));
    expect(fresh).not.toBe(small);
    expect(fresh).not.toBe(big);
  });

  it('keeps at most its bound of free buffers; the rest are left to the GC', () => {
    const pool = new RestBuffers(1 << 20);
    const a = pool.take(bytes(700_000, 1));
    const b = pool.take(bytes(700_000, 2));
    pool.release(a);
    pool.release(b);
    expect(pool.keptBytes).toBe(a.length);
    expect(pool.take(bytes(10, 0))).toBe(a);
    expect(pool.take(bytes(10, 0))).not.toBe(b);
  });
});
