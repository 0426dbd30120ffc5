import { allocF64 } from './shared-memory.js';

const B = 16;

/**
 * A static B-ary tree of minimums over a Float64Array (the leaves, not copied). It answers
 * "the greatest index i in [lo, hi] with leaves[i] <= t" in O(B log_B n) steps: the
 * question behind `latest` (the last key of a series with a visible version) and behind
 * the dataset-wide metadata, whatever the shape of the data.
 *
 * Internal levels cost n/(B-1) doubles, sized once at build.
 */
export class MinTree {
  /** levels[0] is the leaves; levels[l][j] = min of levels[l-1][j*B .. j*B+B-1] */
  private readonly levels: Float64Array[];

  /** Rebuilds a tree from the arrays of `levels` (e.g. after a worker thread built it). */
  static fromLevels(levels: readonly Float64Array[]): MinTree {
    const t = Object.create(MinTree.prototype) as { levels: Float64Array[] };
    t.levels = [...levels];
    return t as unknown as MinTree;
  }

  /** The backing arrays (shared memory), for handing the tree to another thread. */
  get arrays(): readonly Float64Array[] {
    return this.levels;
  }

  constructor(leaves: Float64Array) {
    this.levels = [leaves];
    let below = leaves;
    while (below.length > B) {
      const n = Math.ceil(below.length / B);
      const level = allocF64(n);
      for (let j = 0; j < n; j++) {
        let m = Infinity;
        const end = Math.min(below.length, j * B + B);
        for (let c = j * B; c < end; c++) if (below[c]! < m) m = below[c]!;
        level[j] = m;
      }
      this.levels.push(level);
      below = level;
    }
  }

  get byteSize(): number {
    let s = 0;
    for (let l = 1; l < this.levels.length; l++) s += this.levels[l]!.byteLength;
    return s;
  }

  /** Greatest i in [lo, hi] with leaves[i] <= t, or -1. */
  rightmostAtMost(lo: number, hi: number, t: number): number {
    const leaves = this.levels[0]!;
    if (hi >= leaves.length) hi = leaves.length - 1;
    if (lo < 0) lo = 0;
    if (hi < lo) return -1;
    let i = hi;
    const start = i - (i % B);
    for (; i >= lo && i >= start; i--) if (leaves[i]! <= t) return i;
    if (i < lo) return -1;
    // i is the last leaf of the previous block: climb, testing whole nodes.
    let l = 1;
    let j = (i + 1) / B - 1;
    let size = B;
    while (l < this.levels.length && j >= 0) {
      const level = this.levels[l]!;
      const blockStart = j - (j % B);
      for (; j >= blockStart; j--) {
        if (j * size < lo) return this.scanDown(l, j, size, lo, t);
        if (level[j]! <= t) return this.descend(l, j, t);
      }
      j = (j + 1) / B - 1;
      l++;
      size *= B;
    }
    return -1;
  }

  /** Node j of level l lies wholly in range and holds a value <= t: find its rightmost leaf. */
  private descend(l: number, j: number, t: number): number {
    for (; l > 0; l--) {
      const below = this.levels[l - 1]!;
      let c = Math.min(j * B + B, below.length) - 1;
      while (below[c]! > t) c--;
      j = c;
    }
    return j;
  }

  /** Node j of level l starts before lo: search its children, bounded by lo. */
  private scanDown(l: number, j: number, size: number, lo: number, t: number): number {
    const below = this.levels[l - 1]!;
    const childSize = size / B;
    for (let c = Math.min(j * B + B, below.length) - 1; c >= j * B; c--) {
      const childStart = c * childSize;
      if (childStart + childSize - 1 < lo) return -1;
      if (l - 1 === 0) {
        if (below[c]! <= t) return c;
      } else if (childStart < lo) {
        const r = this.scanDown(l - 1, c, childSize, lo, t);
        if (r >= 0) return r;
      } else if (below[c]! <= t) {
        return this.descend(l - 1, c, t);
      }
    }
    return -1;
  }
}
