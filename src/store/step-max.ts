import { AscendingInstants, type AscendingArrays } from './ascending-instants.js';
import { allocF64 } from './shared-memory.js';
import { sortPairs } from './sort-pairs.js';

/** Below this many items, sorting them all is cheaper than pruning first. */
const PRUNE_FROM = 4096;
const BUCKETS = 1 << 16;

/**
 * "The greatest value among items whose threshold is <= t", for any t, in O(log n).
 * Items sorted by threshold give a prefix maximum that only ever steps up; only the steps
 * are kept. Used for the dataset-wide metadata, whose answer depends on `as_of` alone.
 *
 * The steps are a function of the set of (threshold, value) items only: a step at every
 * threshold where that maximum rises. So any way of finding them gives the same steps,
 * which is what lets the builders below skip most of the sorting.
 *
 * A step whose value is its own threshold (the observed instant of a row visible from its
 * observation on: most rows of a dataset, so about one step per row) is kept as its
 * threshold alone, in `same`: the maximum at t is the greater of the last step of either
 * list at or before t (both lists step up, so the last step of all is the last of one of
 * them). That halves the bytes of `maxObservedByThr`; and each of the three ascending lists
 * is packed at about 4 bytes a value (ascending-instants.ts), so a step costs 4 bytes, or 8
 * for a pair (a row observed before the vintage floor): docs/snapshots.md#memory.
 */
export interface StepArrays {
  /** ascending thresholds at which the maximum steps up to a value other than the threshold */
  readonly at: AscendingArrays;
  /** the maximum from at[i] on (ascending) */
  readonly value: AscendingArrays;
  /** ascending thresholds at which the maximum steps up to the threshold itself */
  readonly same: AscendingArrays;
}

export class StepMax {
  private constructor(
    private readonly at: AscendingInstants,
    private readonly value: AscendingInstants,
    private readonly same: AscendingInstants,
  ) {}

  /** Rebuilds from `arrays` (e.g. after a worker thread built it). */
  static fromArrays(arrays: StepArrays): StepMax {
    return new StepMax(AscendingInstants.fromArrays(arrays.at), AscendingInstants.fromArrays(arrays.value), AscendingInstants.fromArrays(arrays.same));
  }

  /** The backing arrays (shared memory), for handing the structure to another thread. */
  get arrays(): StepArrays {
    return { at: this.at.arrays, value: this.value.arrays, same: this.same.arrays };
  }

  /** Every step, both lists merged in threshold order (tests). */
  steps(): { at: number[]; value: number[] } {
    const at: number[] = [];
    const value: number[] = [];
    const same = this.same.toArray();
    let i = 0;
    let j = 0;
    const stepAt = this.at.toArray();
    const stepValue = this.value.toArray();
    while (i < stepAt.length || j < same.length) {
      if (j >= same.length || (i < stepAt.length && stepAt[i]! < same[j]!)) {
        at.push(stepAt[i]!);
        value.push(stepValue[i++]!);
      } else {
        at.push(same[j]!);
        value.push(same[j++]!);
      }
    }
    return { at, value };
  }

  /**
   * thresholds and values are parallel arrays; thresholds must be finite integers.
   *
   * Only items that beat every item of an earlier threshold bucket can be a step (an item
   * of an earlier bucket has a smaller threshold); one linear pass finds those, and only
   * they are sorted. With mostly increasing data that is a small share of the items.
   */
  static build(thresholds: Float64Array, values: ArrayLike<number>, range = rangeOf(thresholds)): StepMax {
    const n = thresholds.length;
    if (n === 0) return new StepMax(AscendingInstants.of(allocF64(0)), AscendingInstants.of(allocF64(0)), AscendingInstants.of(allocF64(0)));
    const { min, max } = range;
    if (n < PRUNE_FROM || max === min) return stepsOf(thresholds, values, null);
    const scale = (BUCKETS - 1) / (max - min);
    const best = new Float64Array(BUCKETS).fill(-Infinity);
    for (let i = 0; i < n; i++) {
      const b = Math.min(BUCKETS - 1, Math.floor((thresholds[i]! - min) * scale));
      const v = values[i]!;
      if (v > best[b]!) best[b] = v;
    }
    // best[b] becomes the greatest value of the buckets before b.
    let running = -Infinity;
    for (let b = 0; b < BUCKETS; b++) {
      const here = best[b]!;
      best[b] = running;
      if (here > running) running = here;
    }
    // Usually a small share of the items: grown as needed rather than sized for all.
    let candidates = new Int32Array(Math.max(1024, n >> 3));
    let m = 0;
    for (let i = 0; i < n; i++) {
      if (values[i]! > best[Math.min(BUCKETS - 1, Math.floor((thresholds[i]! - min) * scale))]!) {
        if (m === candidates.length) {
          const grown = new Int32Array(Math.min(n, 2 * m));
          grown.set(candidates);
          candidates = grown;
        }
        candidates[m++] = i;
      }
    }
    return stepsOf(thresholds, values, candidates.subarray(0, m));
  }

  /**
   * The same steps as build(thresholds, days) when values are whole days in
   * [minDay, minDay + span): the greatest day visible at t is the greatest day d whose
   * suffix (days >= d) has an item with threshold <= t. One pass, no sort.
   */
  static overDays(thresholds: Float64Array, days: Int32Array, minDay: number, span: number): StepMax {
    const n = thresholds.length;
    if (n === 0) return new StepMax(AscendingInstants.of(allocF64(0)), AscendingInstants.of(allocF64(0)), AscendingInstants.of(allocF64(0)));
    const first = new Float64Array(span).fill(Infinity);
    for (let i = 0; i < n; i++) {
      const d = days[i]! - minDay;
      const t = thresholds[i]!;
      if (t < first[d]!) first[d] = t;
    }
    // first[d] becomes the least threshold of any day >= d (for days that occur).
    let suffix = Infinity;
    let steps = 0;
    for (let d = span - 1; d >= 0; d--) {
      const t = first[d]!;
      if (t === Infinity) continue;
      if (t < suffix) {
        suffix = t;
        steps++;
      }
      first[d] = suffix;
    }
    const at = allocF64(steps);
    const value = allocF64(steps);
    let k = -1;
    for (let d = 0; d < span; d++) {
      const t = first[d]!;
      if (t === Infinity) continue;
      if (k >= 0 && at[k] === t) value[k] = d + minDay;
      else {
        at[++k] = t;
        value[k] = d + minDay;
      }
    }
    return new StepMax(AscendingInstants.of(at), AscendingInstants.of(value), AscendingInstants.of(allocF64(0)));
  }

  /** The greatest value with threshold <= t, or null when there is none. */
  query(t: number): number | null {
    const i = this.at.countUpTo(t);
    const same = this.same.greatestUpTo(t);
    if (i === 0) return same === -Infinity ? null : same;
    const v = this.value.get(i - 1);
    return v > same ? v : same;
  }

  get byteSize(): number {
    return this.at.byteSize + this.value.byteSize + this.same.byteSize;
  }
}

/** The steps of the items `subset` (null = all), walked in threshold order. */
function stepsOf(thresholds: Float64Array, values: ArrayLike<number>, subset: Int32Array | null): StepMax {
  const m = subset === null ? thresholds.length : subset.length;
  // The pairs themselves are sorted, not indices to them: every pass then reads in order.
  const at = new Float64Array(m);
  const value = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    const r = subset === null ? j : subset[j]!;
    at[j] = thresholds[r]!;
    value[j] = values[r]!;
  }
  sortPairs(at, value, 0, m, new Float64Array(m), new Float64Array(m));
  // Steps overwrite the pairs from the front: step k never passes pair j.
  let k = -1;
  let best = -Infinity;
  for (let j = 0; j < m; j++) {
    const v = value[j]!;
    if (v > best) {
      best = v;
      const t = at[j]!;
      // Equal thresholds collapse into one step holding the larger value (in any order).
      if (k >= 0 && at[k] === t) value[k] = v;
      else {
        at[++k] = t;
        value[k] = v;
      }
    }
  }
  let same = 0;
  for (let j = 0; j <= k; j++) if (at[j] === value[j]) same++;
  const a = allocF64(k + 1 - same);
  const b = allocF64(k + 1 - same);
  const c = allocF64(same);
  for (let j = 0, x = 0, y = 0; j <= k; j++) {
    if (at[j] === value[j]) c[y++] = at[j]!;
    else {
      a[x] = at[j]!;
      b[x++] = value[j]!;
    }
  }
  return StepMax.fromArrays({ at: AscendingInstants.of(a).arrays, value: AscendingInstants.of(b).arrays, same: AscendingInstants.of(c).arrays });
}

function rangeOf(a: Float64Array): { min: number; max: number } {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < a.length; i++) {
    const t = a[i]!;
    if (t < min) min = t;
    if (t > max) max = t;
  }
  return { min, max };
}
