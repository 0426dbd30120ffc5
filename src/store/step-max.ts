import { allocF64 } from './shared-memory.js';
import { radixSortIndices } from './radix-sort.js';

/**
 * "The greatest value among items whose threshold is <= t", for any t, in O(log n).
 * Items sorted by threshold give a prefix maximum that only ever steps up; only the steps
 * are kept. Used for the dataset-wide metadata, whose answer depends on `as_of` alone.
 */
export class StepMax {
  private constructor(
    /** ascending thresholds at which the maximum steps up */
    private readonly at: Float64Array,
    /** the maximum from at[i] on (ascending) */
    private readonly value: Float64Array,
  ) {}

  /** Rebuilds from `arrays` (e.g. after a worker thread built it). */
  static fromArrays(arrays: { at: Float64Array; value: Float64Array }): StepMax {
    return new StepMax(arrays.at, arrays.value);
  }

  /** The backing arrays (shared memory), for handing the structure to another thread. */
  get arrays(): { at: Float64Array; value: Float64Array } {
    return { at: this.at, value: this.value };
  }

  /** thresholds and values are parallel arrays; thresholds must be finite. */
  static build(thresholds: Float64Array, values: ArrayLike<number>): StepMax {
    const n = thresholds.length;
    if (n === 0) return new StepMax(allocF64(0), allocF64(0));
    let min = Infinity;
    for (let i = 0; i < n; i++) if (thresholds[i]! < min) min = thresholds[i]!;
    const keys = new Float64Array(n);
    for (let i = 0; i < n; i++) keys[i] = thresholds[i]! - min;
    const order = radixSortIndices(keys);
    const at: number[] = [];
    const value: number[] = [];
    let best = -Infinity;
    for (let i = 0; i < n; i++) {
      const r = order[i]!;
      const v = values[r]!;
      if (v > best) {
        best = v;
        const t = thresholds[r]!;
        // Equal thresholds collapse into one step holding the larger value.
        if (at.length > 0 && at[at.length - 1] === t) value[value.length - 1] = v;
        else {
          at.push(t);
          value.push(v);
        }
      }
    }
    const a = allocF64(at.length);
    const b = allocF64(value.length);
    a.set(at);
    b.set(value);
    return new StepMax(a, b);
  }

  /** The greatest value with threshold <= t, or null when there is none. */
  query(t: number): number | null {
    const at = this.at;
    let lo = 0;
    let hi = at.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (at[mid]! <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? null : this.value[lo - 1]!;
  }

  get byteSize(): number {
    return this.at.byteLength + this.value.byteLength;
  }
}
