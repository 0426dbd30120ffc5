/**
 * Sorts the pairs (t[i], v[i]) of [lo, hi) by t (ties in any order), by bucket sort: one
 * bucket per pair over their range, and a crowded bucket is bucket-sorted again over its
 * own range, which is 1/(m-1) of this one (m > 32), so a few levels reach equal keys.
 * Thresholds spread over their range, so this stays linear where a 16-bit radix sort of
 * indices cost several times more. `st`/`sv` are scratch of the full length.
 */
export function sortPairs(t: Float64Array, v: Float64Array, lo: number, hi: number, st: Float64Array, sv: Float64Array): void {
  const m = hi - lo;
  if (m <= 32) {
    insertionPairs(t, v, lo, hi);
    return;
  }
  let min = Infinity;
  let max = -Infinity;
  for (let j = lo; j < hi; j++) {
    const x = t[j]!;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  if (max === min) return;
  const scale = (m - 1) / (max - min);
  const start = new Int32Array(m + 1);
  for (let j = lo; j < hi; j++) start[Math.min(m - 1, Math.floor((t[j]! - min) * scale)) + 1]!++;
  for (let b = 1; b <= m; b++) start[b]! += start[b - 1]!;
  const next = start.slice(0, m);
  for (let j = lo; j < hi; j++) {
    const p = lo + next[Math.min(m - 1, Math.floor((t[j]! - min) * scale))]!++;
    st[p] = t[j]!;
    sv[p] = v[j]!;
  }
  t.set(st.subarray(lo, hi), lo);
  v.set(sv.subarray(lo, hi), lo);
  for (let b = 0; b < m; b++) {
    if (start[b + 1]! - start[b]! > 1) sortPairs(t, v, lo + start[b]!, lo + start[b + 1]!, st, sv);
  }
}

function insertionPairs(t: Float64Array, v: Float64Array, lo: number, hi: number): void {
  for (let i = lo + 1; i < hi; i++) {
    const x = t[i]!;
    const y = v[i]!;
    let j = i - 1;
    while (j >= lo && t[j]! > x) {
      t[j + 1] = t[j]!;
      v[j + 1] = v[j]!;
      j--;
    }
    t[j + 1] = x;
    v[j + 1] = y;
  }
}
