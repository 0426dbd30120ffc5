import { describe, expect, it } from 'vitest';
import { Doorkeeper } from '../src/server/doorkeeper.js';

describe('Doorkeeper (response cache admission)', () => {
  it('admits a key on its second offer, not its first', () => {
    const d = new Doorkeeper(1024);
    expect(d.admit('/gbsi_eu/system_stress?country=DE')).toBe(false);
    expect(d.admit('/gbsi_eu/system_stress?country=FR')).toBe(false);
    expect(d.admit('/gbsi_eu/system_stress?country=DE')).toBe(true);
    expect(d.admit('/gbsi_eu/system_stress?country=FR')).toBe(true);
  });

  it('admits almost every key of a working set that repeats within its window', () => {
    const d = new Doorkeeper(4096);
    const keys = Array.from({ length: 500 }, (_, i) => `q${i}`);
    for (const k of keys) d.admit(k);
    const admitted = keys.filter((k) => d.admit(k)).length;
    expect(admitted).toBeGreaterThanOrEqual(490);
  });

  it('admits few keys of a sweep far wider than its window (they would be evicted unread)', () => {
    const d = new Doorkeeper(1024);
    const keys = Array.from({ length: 50_000 }, (_, i) => `sweep${i}`);
    for (const k of keys) d.admit(k);
    const admitted = keys.filter((k) => d.admit(k)).length;
    expect(admitted).toBeLessThan(keys.length * 0.05);
  });
});
