/**
 * Per key, the least visibility threshold of it and of every later key of its series (a
 * suffix minimum within each series): `latest` asks, per series, for the last key visible
 * under `as_of` = T, and within a series this array never decreases, so that key is the
 * last one whose suffix minimum is <= T, found by one binary search of a contiguous array
 * (docs/decisions.md#date-order). The min-tree (min-tree.ts) answers the same question
 * for any range in O(16 log16 n) scattered reads; this one is 8 bytes a key.
 */
export function buildSuffixMin(keyThr: Float64Array, seriesKeyStart: Int32Array, seriesCount: number): Float64Array {
  const out = new Float64Array(keyThr.length);
  for (let s = 0; s < seriesCount; s++) {
    let m = Infinity;
    for (let k = seriesKeyStart[s + 1]! - 1, a = seriesKeyStart[s]!; k >= a; k--) {
      const t = keyThr[k]!;
      if (t < m) m = t;
      out[k] = m;
    }
  }
  return out;
}

/**
 * The last key of [lo, end) visible under T, where `end` is its series' end and `suffix`
 * is buildSuffixMin's array: the last k with suffix[k] <= T (it is non-decreasing there),
 * or -1 when no key of [lo, end) is visible.
 */
export function lastVisibleKey(suffix: Float64Array, lo: number, end: number, t: number): number {
  let a = lo;
  let b = end;
  while (a < b) {
    const mid = (a + b) >>> 1;
    if (suffix[mid]! <= t) a = mid + 1;
    else b = mid;
  }
  return a - 1 >= lo ? a - 1 : -1;
}
