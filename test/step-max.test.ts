/**
 * StepMax answers the dataset-wide metadata (data_latest_date, data_age_hours). Its builders
 * skip most of the sorting (bucket pruning; a one-pass form for whole days), so each is
 * checked against the plain definition: sort every item by threshold, keep each threshold
 * where the running maximum rises.
 */
import { describe, expect, it } from 'vitest';
import { StepMax } from '../src/store/step-max.js';
import { Rng } from './support/random-snapshot.js';

function reference(thresholds: Float64Array, values: ArrayLike<number>): { at: number[]; value: number[] } {
  const order = Array.from(thresholds, (_, i) => i).sort((a, b) => thresholds[a]! - thresholds[b]!);
  const at: number[] = [];
  const value: number[] = [];
  let best = -Infinity;
  for (const r of order) {
    const v = values[r]!;
    if (v <= best) continue;
    best = v;
    if (at.length > 0 && at[at.length - 1] === thresholds[r]) value[value.length - 1] = v;
    else {
      at.push(thresholds[r]!);
      value.push(v);
    }
  }
  return { at, value };
}

const plain = (s: StepMax): { at: number[]; value: number[] } => s.steps();

interface Case {
  readonly name: string;
  readonly n: number;
  /** threshold and value of item i */
  make(rng: Rng, i: number): [number, number];
}

const DAY = 86_400_000_000;
const CASES: readonly Case[] = [
  { name: 'random thresholds and values', n: 20_000, make: (r) => [r.int(-1e9, 1e9), r.int(0, 1000)] },
  // As rowThr / observed: live rows have value = threshold, backfilled ones share a day's threshold.
  {
    name: 'observed-like: values equal to thresholds, and pre-floor rows sharing thresholds',
    n: 30_000,
    make: (r, i) => {
      const day = r.int(0, 3000);
      if (i % 3 === 0) return [1_700_000_000_000_000 + day * DAY, 1_800_000_000_000_000 + r.int(0, 3 * 3600e6)];
      const t = 1_800_000_000_000_000 + r.int(0, 300 * DAY);
      return [t, r.chance(0.9) ? t : t - r.int(0, DAY)];
    },
  },
  { name: 'few distinct thresholds', n: 10_000, make: (r) => [r.pick([5, 7, 7, 100, -3]), r.int(0, 50)] },
  { name: 'one far outlier over clustered thresholds', n: 9_000, make: (r, i) => [i === 17 ? 2 ** 52 : r.int(0, 5000), r.int(0, 1e6)] },
  { name: 'small (no pruning)', n: 50, make: (r) => [r.int(0, 20), r.int(0, 20)] },
  { name: 'one item', n: 1, make: () => [42, 7] },
  { name: 'empty', n: 0, make: () => [0, 0] },
];

describe('StepMax builders equal the plain definition', () => {
  for (const c of CASES) {
    it(c.name, () => {
      for (const seed of [1, 2, 3]) {
        const rng = new Rng(seed * 7919 + c.n);
        const thresholds = new Float64Array(c.n);
        const values = new Float64Array(c.n);
        for (let i = 0; i < c.n; i++) [thresholds[i], values[i]] = c.make(rng, i);
        expect(plain(StepMax.build(thresholds, values))).toEqual(reference(thresholds, values));
      }
    });
  }

  it('overDays (values are whole days) gives the same steps as build', () => {
    for (const [n, span] of [
      [0, 1],
      [1, 1],
      [40, 3],
      [20_000, 4000],
      [20_000, 30],
    ] as const) {
      const rng = new Rng(n + span);
      const minDay = -200 + rng.int(0, 400);
      const days = new Int32Array(n);
      const thresholds = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        days[i] = minDay + rng.int(0, span - 1);
        // Mostly later days become visible later, with revisions and backfills mixed in.
        thresholds[i] = rng.chance(0.8) ? (days[i]! + rng.int(0, 3)) * DAY + rng.int(0, DAY) : rng.int(minDay, minDay + span) * DAY;
      }
      const expected = reference(thresholds, days);
      expect(plain(StepMax.overDays(thresholds, days, minDay, span))).toEqual(expected);
      expect(plain(StepMax.build(thresholds, days))).toEqual(expected);
    }
  });
});
