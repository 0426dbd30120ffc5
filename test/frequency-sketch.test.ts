import { describe, expect, it } from 'vitest';
import { FrequencySketch } from '../src/cache/frequency-sketch.js';
import { fnv1a } from '../src/query/hash.js';

const h = (k: string): number => fnv1a(k);

describe('FrequencySketch (TinyLFU counts of recent asks)', () => {
  it("counts each key's asks, 0 for a key never asked, and stops at 15", () => {
    const s = new FrequencySketch(1 << 14);
    expect(s.estimate(h('never'))).toBe(0);
    // increment answers the count before it: what the response cache asks ("asked before?").
    expect([0, 1, 2].map(() => s.increment(h('three')))).toEqual([0, 1, 2]);
    for (let i = 0; i < 39; i++) s.increment(h('hot'));
    expect(s.increment(h('hot'))).toBe(15);
    expect(s.estimate(h('three'))).toBe(3);
    expect(s.estimate(h('hot'))).toBe(15);
    // Past 15 an increment is not even counted towards the halving.
    expect(s.sampled).toBe(3 + 15);
  });

  it('keeps most keys apart when they are fewer than its counters', () => {
    const s = new FrequencySketch(1 << 14); // halving after 10,240 increments: not reached here
    const keys = Array.from({ length: 2000 }, (_, i) => `/wssi_us/demand_shock/walk_forward?series=${i}`);
    keys.forEach((k, i) => {
      for (let n = 0; n < (i % 3) + 1; n++) s.increment(h(k));
    });
    expect(s.sampled).toBe(3999);
    const exact = keys.filter((k, i) => s.estimate(h(k)) === (i % 3) + 1).length;
    expect(exact).toBeGreaterThanOrEqual(1980);
    // A collision can only raise an estimate, never lower it.
    expect(keys.every((k, i) => s.estimate(h(k)) >= (i % 3) + 1)).toBe(true);
  });

  it('halves every count after width x 5/8 increments, so old heat fades', () => {
    const s = new FrequencySketch(1 << 14); // 16,384 counters: halving after 10,240 increments
    for (let i = 0; i < 12; i++) s.increment(h('yesterday'));
    for (let i = 0; i < 10_239 - 12; i++) s.increment(h(`today${i}`));
    expect(s.sampled).toBe(10_239);
    // This many keys in 16,384 counters collide now and then: a count may read high, never low.
    const before = Array.from({ length: 200 }, (_, i) => s.estimate(h(`today${i}`)));
    const hot = s.estimate(h('yesterday'));
    expect(hot).toBeGreaterThanOrEqual(12);
    expect(before.every((n) => n >= 1)).toBe(true);
    expect(before.filter((n) => n === 1).length).toBeGreaterThan(150);
    s.increment(h('the last one'));
    // Halving every counter halves (rounding down) the least of a key's four.
    expect(s.estimate(h('yesterday'))).toBe(hot >>> 1);
    expect(Array.from({ length: 200 }, (_, i) => s.estimate(h(`today${i}`)))).toEqual(before.map((n) => n >>> 1));
    expect(s.sampled).toBe(10_240 >>> 1);
  });

  it('rounds its width up to a power of two of at least 1024 counters', () => {
    // 1000 asked for: 1024 counters, so the halving comes after 640 increments, not 625.
    const s = new FrequencySketch(1000);
    for (let i = 0; i < 639; i++) s.increment(h(`k${i}`));
    expect(s.sampled).toBe(639);
    s.increment(h('k639'));
    expect(s.sampled).toBe(320);
    // 3000 asked for: 4096 counters, halving after 2560.
    const t = new FrequencySketch(3000);
    for (let i = 0; i < 2559; i++) t.increment(h(`k${i}`));
    expect(t.sampled).toBe(2559);
    expect(t.width).toBe(4096);
    // At most 2^22 counters (4 MiB) however large the cache.
    expect(new FrequencySketch(1 << 22).width).toBe(1 << 22);
    expect(new FrequencySketch(1 << 30).width).toBe(1 << 22);
    expect(new FrequencySketch(1).width).toBe(1024);
  });
});
