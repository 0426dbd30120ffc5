/**
 * AscendingInstants keeps a step list of instants in about 4 bytes a value (high words as
 * runs, low words as Uint32): "the greatest value <= t", "how many are <= t" and value i
 * must be what the plain values give, for every t at, around and between the values, across high-word boundaries,
 * before 1970 and at the infinities; a dense list must be packed and a sparse one kept plain.
 */
import { describe, expect, it } from 'vitest';
import { AscendingInstants } from '../src/store/ascending-instants.js';
import { StepMax } from '../src/store/step-max.js';
import { Rng } from './support/random-snapshot.js';

const WORD = 2 ** 32;

function greatestUpTo(values: readonly number[], t: number): number {
  let best = -Infinity;
  for (const v of values) if (v <= t) best = v;
  return best;
}

/** Ascending whole numbers from `start`, gaps drawn by `gap`. */
function ascending(rng: Rng, n: number, start: number, gap: () => number): Float64Array {
  const a = new Float64Array(n);
  let v = start;
  for (let i = 0; i < n; i++) {
    a[i] = v;
    v += gap();
  }
  return a;
}

function probes(rng: Rng, values: Float64Array): number[] {
  const ts = [-Infinity, Infinity, 0, -1, WORD, WORD - 1, -WORD];
  for (const v of values) ts.push(v, v - 1, v + 1, v + 0.5);
  for (let i = 0; i < 200 && values.length > 0; i++) ts.push(rng.int(values[0]! - 1e9, values[values.length - 1]! + 1e9));
  return ts;
}

describe('AscendingInstants', () => {
  const cases: Array<{ name: string; make: (rng: Rng) => Float64Array; packed: boolean }> = [
    {
      name: 'dense instants of 2026 (a step every few seconds)',
      make: (r) => ascending(r, 5000, 1_780_000_000_000_000, () => r.int(1, 10_000_000)),
      packed: true,
    },
    {
      name: 'dense across many high words (gaps up to 4 minutes)',
      make: (r) => ascending(r, 5000, 1_780_000_000_000_000, () => r.int(0, 240_000_000)),
      packed: true,
    },
    { name: 'dense before 1970, crossing zero', make: (r) => ascending(r, 4000, -5 * WORD - 17, () => r.int(1, 30_000_000)), packed: true },
    {
      name: 'sparse (a value a day): kept plain',
      make: (r) => ascending(r, 3000, 1_700_000_000_000_000, () => r.int(86_400_000_000, 2 * 86_400_000_000)),
      packed: false,
    },
    {
      name: 'a value that is not whole: kept plain',
      make: (r) =>
        Float64Array.from(
          ascending(r, 100, 0, () => r.int(1, 100)),
          (v, i) => (i === 50 ? v + 0.5 : v),
        ),
      packed: false,
    },
    { name: 'one value', make: () => Float64Array.of(1_780_000_000_000_123), packed: false },
    { name: 'empty', make: () => new Float64Array(0), packed: false },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const rng = new Rng(c.name.length);
      const values = c.make(rng);
      const list = [...values];
      const a = AscendingInstants.of(values);
      expect(a.toArray()).toEqual(list);
      expect(a.length).toBe(list.length);
      if (c.packed) expect(a.byteSize).toBeLessThan(5 * list.length);
      else expect(a.byteSize).toBe(8 * list.length);
      for (const t of probes(rng, values)) {
        expect(a.greatestUpTo(t), `t = ${t}`).toBe(greatestUpTo(list, t));
        expect(a.countUpTo(t), `t = ${t}`).toBe(list.filter((v) => v <= t).length);
      }
      for (let i = 0; i < list.length; i++) if (a.get(i) !== list[i]) expect(a.get(i), `value ${i}`).toBe(list[i]);
      // The same through another thread's view of its arrays.
      const b = AscendingInstants.fromArrays(a.arrays);
      for (const t of probes(rng, values).slice(0, 300)) expect(b.greatestUpTo(t)).toBe(greatestUpTo(list, t));
    });
  }

  it("StepMax's query over observed-like items equals the plain definition at every threshold", () => {
    const rng = new Rng(11);
    const n = 20_000;
    const thresholds = new Float64Array(n);
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const t = 1_800_000_000_000_000 + rng.int(0, 30 * 86_400_000_000);
      thresholds[i] = t;
      values[i] = rng.chance(0.9) ? t : t - rng.int(0, 86_400_000_000);
    }
    const s = StepMax.build(thresholds, values);
    const sorted = Array.from(thresholds).sort((x, y) => x - y);
    const answer = (t: number): number | null => {
      let best: number | null = null;
      for (let i = 0; i < n; i++) if (thresholds[i]! <= t && (best === null || values[i]! > best)) best = values[i]!;
      return best;
    };
    const ts = [-Infinity, Infinity, sorted[0]! - 1];
    for (let k = 0; k < 300; k++) {
      const t = sorted[rng.int(0, n - 1)]!;
      ts.push(t, t - 1, t + 1);
    }
    for (const t of ts) expect(s.query(t), `t = ${t}`).toBe(answer(t));
    // Most steps are their own threshold, kept at about 4 bytes each.
    expect(s.byteSize).toBeLessThan(6 * s.steps().at.length);
  });
});
