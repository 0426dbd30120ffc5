import { allocF64, allocI32, allocShared } from './shared-memory.js';

const WORD = 2 ** 32;

/** The arrays of an AscendingInstants, for handing it to another thread (all on shared memory). */
export interface AscendingArrays {
  /** the values as they are, when packing would not save bytes (else empty) */
  readonly plain: Float64Array;
  /** each value's low 32 bits (value - hi * 2^32) */
  readonly lo: Uint32Array;
  /** the distinct high words, ascending */
  readonly hi: Float64Array;
  /** the values of high word hi[r] are [hiStart[r], hiStart[r + 1]) */
  readonly hiStart: Int32Array;
}

/**
 * An ascending list of integer instants (µs; or whole days) in about 4 bytes each instead of 8: a value is
 * hi * 2^32 + lo with lo in a Uint32Array, and the values sharing a high word (a window of
 * 71.6 minutes) form one run, kept once as (hi, first index). A list as dense as a dataset's
 * step list of observed instants (a step every few seconds) has few runs, so it costs half
 * of the Float64Array (docs/snapshots.md#memory). A sparse one, whose runs would cost more
 * than they save, or one holding a value that is not a whole number, stays a Float64Array.
 *
 * Only ever searched by "the greatest value <= t", once per answer (its metadata): not a
 * hot loop.
 */
export class AscendingInstants {
  private constructor(private readonly a: AscendingArrays) {}

  static fromArrays(a: AscendingArrays): AscendingInstants {
    return new AscendingInstants(a);
  }

  static readonly EMPTY_ARRAYS = (): AscendingArrays => ({ plain: allocF64(0), lo: allocShared(Uint32Array, 0), hi: allocF64(0), hiStart: allocI32(0) });

  /** `values` ascending, finite (not copied when kept plain). */
  static of(values: Float64Array): AscendingInstants {
    const n = values.length;
    let runs = 0;
    let whole = true;
    let prev = NaN;
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      if (!Number.isSafeInteger(v)) whole = false;
      const h = Math.floor(v / WORD);
      if (h !== prev) runs++;
      prev = h;
    }
    // Packed: 4 bytes a value + 12 a run; kept plain when that is not less than 8 a value.
    if (!whole || n === 0 || 4 * n + 12 * runs + 4 >= 8 * n) {
      return new AscendingInstants({ ...AscendingInstants.EMPTY_ARRAYS(), plain: values });
    }
    const lo = allocShared(Uint32Array, n);
    const hi = allocF64(runs);
    const hiStart = allocI32(runs + 1);
    let r = -1;
    for (let i = 0; i < n; i++) {
      const v = values[i]!;
      const h = Math.floor(v / WORD);
      if (r < 0 || h !== hi[r]) {
        hi[++r] = h;
        hiStart[r] = i;
      }
      lo[i] = v - h * WORD;
    }
    hiStart[runs] = n;
    return new AscendingInstants({ plain: allocF64(0), lo, hi, hiStart });
  }

  get arrays(): AscendingArrays {
    return this.a;
  }

  get length(): number {
    return this.a.plain.length > 0 ? this.a.plain.length : this.a.lo.length;
  }

  get byteSize(): number {
    const { plain, lo, hi, hiStart } = this.a;
    return plain.byteLength + lo.byteLength + hi.byteLength + hiStart.byteLength;
  }

  /** How many values are <= t. */
  countUpTo(t: number): number {
    const { plain, lo, hi, hiStart } = this.a;
    if (plain.length > 0) return countUpTo(plain, 0, plain.length, t);
    const runs = hi.length;
    if (runs === 0) return 0;
    const h = Math.floor(t / WORD);
    // r: the last run whose high word is <= h.
    const r = countUpTo(hi, 0, runs, h) - 1;
    if (r < 0) return 0;
    if (hi[r]! < h) return hiStart[r + 1]!;
    return countUpTo(lo, hiStart[r]!, hiStart[r + 1]!, t - h * WORD);
  }

  /** Value i (0 <= i < length). */
  get(i: number): number {
    const { plain, lo, hi, hiStart } = this.a;
    if (plain.length > 0) return plain[i]!;
    // The run holding i: the last whose first index is <= i.
    let a = 0;
    let b = hi.length;
    while (b - a > 1) {
      const mid = (a + b) >>> 1;
      if (hiStart[mid]! <= i) a = mid;
      else b = mid;
    }
    return hi[a]! * WORD + lo[i]!;
  }

  /** The greatest value <= t, or -Infinity when there is none. */
  greatestUpTo(t: number): number {
    const c = this.countUpTo(t);
    return c === 0 ? -Infinity : this.get(c - 1);
  }

  /** Every value, in order (tests). */
  toArray(): number[] {
    const { plain, lo, hi, hiStart } = this.a;
    if (plain.length > 0) return Array.from(plain);
    const out: number[] = [];
    for (let r = 0; r < hi.length; r++) for (let i = hiStart[r]!; i < hiStart[r + 1]!; i++) out.push(hi[r]! * WORD + lo[i]!);
    return out;
  }
}

/** lo + how many of the ascending a[lo..hi) are <= t. */
function countUpTo(a: Float64Array | Uint32Array, lo: number, hi: number, t: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
