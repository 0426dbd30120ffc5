import { radixSortIndices } from './radix-sort.js';

/** A series-key column as the sort needs it: codes in snapshot order, and the rank of each code (UTF-8 byte order). */
export interface KeyCodes {
  readonly codes: Int32Array;
  readonly cardinality: number;
  readonly rank: Int32Array;
}

/** Rows ordered by (series rank, date), ties in snapshot order: the physical order but for the versions inside a key. */
export interface SeriesOrder {
  /** perm[i] = snapshot row at physical position i; null when the snapshot is already in this order */
  readonly perm: Int32Array | null;
  /** series s (by rank) owns physical rows [seriesStart[s], seriesStart[s+1]) */
  readonly seriesStart: Int32Array;
  readonly seriesCount: number;
  readonly minDate: number;
  /** maxDate - minDate + 1 (1 for an empty snapshot) */
  readonly span: number;
}

/** A date span above this is sorted through the generic radix sort instead of by counting. */
const COUNTING_SPAN = 1 << 22;

/**
 * The first two terms of the physical order of table.ts. A snapshot already written in that
 * order (as `pitcache publish` writes it) is detected in one pass and not moved.
 */
export function orderBySeriesAndDate(n: number, date: Int32Array, keys: readonly KeyCodes[]): SeriesOrder {
  const { seriesOfRow, seriesCount, firstRow } = assignSeries(keys, n);
  const seriesRank = rankSeries(seriesCount, firstRow, keys);
  let minDate = Infinity;
  let maxDate = -Infinity;
  for (let i = 0; i < n; i++) {
    seriesOfRow[i] = seriesRank[seriesOfRow[i]!]!;
    const d = date[i]!;
    if (d < minDate) minDate = d;
    if (d > maxDate) maxDate = d;
  }
  if (n === 0) minDate = maxDate = 0;
  const span = maxDate - minDate + 1;
  if (seriesCount * span >= 2 ** 53) throw new Error('date range too wide to index');

  const seriesStart = new Int32Array(seriesCount + 1);
  for (let i = 0; i < n; i++) seriesStart[seriesOfRow[i]! + 1]!++;
  for (let s = 1; s <= seriesCount; s++) seriesStart[s]! += seriesStart[s - 1]!;
  const base = { seriesStart, seriesCount, minDate, span };
  if (bySeriesAndDate(seriesOfRow, date)) return { ...base, perm: null };

  let perm: Int32Array;
  if (span <= COUNTING_SPAN) {
    // LSD by counting: dates (unless already ascending, as in day-by-day appends), then series.
    const byDate = ascending(date) ? null : countingOrder(null, date, minDate, span);
    perm = countingOrder(byDate, seriesOfRow, 0, seriesCount);
  } else {
    const composite = new Float64Array(n);
    for (let i = 0; i < n; i++) composite[i] = seriesOfRow[i]! * span + (date[i]! - minDate);
    perm = radixSortIndices(composite);
  }
  return { ...base, perm };
}

/** inverse of a permutation: rank[perm[i]] = i */
export function inversePermutation(perm: Int32Array): Int32Array {
  const rank = new Int32Array(perm.length);
  for (let i = 0; i < perm.length; i++) rank[perm[i]!] = i;
  return rank;
}

function bySeriesAndDate(series: Int32Array, date: Int32Array): boolean {
  for (let i = 1; i < series.length; i++) {
    const s = series[i]! - series[i - 1]!;
    if (s < 0 || (s === 0 && date[i]! < date[i - 1]!)) return false;
  }
  return true;
}

function ascending(a: Int32Array): boolean {
  for (let i = 1; i < a.length; i++) if (a[i]! < a[i - 1]!) return false;
  return true;
}

/** Stable counting sort of `order` (null = 0..n-1) by key[row] - min, keys in [0, size). */
function countingOrder(order: Int32Array | null, key: Int32Array, min: number, size: number): Int32Array {
  const n = key.length;
  const start = new Int32Array(size + 1);
  for (let i = 0; i < n; i++) start[key[i]! - min + 1]!++;
  for (let k = 1; k <= size; k++) start[k]! += start[k - 1]!;
  const out = new Int32Array(n);
  if (order === null) {
    for (let i = 0; i < n; i++) out[start[key[i]! - min]!++] = i;
  } else {
    for (let i = 0; i < n; i++) {
      const r = order[i]!;
      out[start[key[r]! - min]!++] = r;
    }
  }
  return out;
}

/** Up to this many combinations of key codes, series ids come from one lookup table. */
const LUT_SIZE = 1 << 24;

/** Dense series ids in order of first appearance, from the tuple of key codes. */
function assignSeries(cols: readonly KeyCodes[], n: number) {
  const seriesOfRow = new Int32Array(n);
  let count = n === 0 ? 0 : 1;
  // Columns are folded into the id a few at a time: as many as one table can index.
  for (let c = 0; c < cols.length;) {
    let size = count;
    let end = c;
    while (end < cols.length && size * Math.max(1, cols[end]!.cardinality) <= LUT_SIZE) size *= Math.max(1, cols[end++]!.cardinality);
    count = end > c ? foldByTable(seriesOfRow, cols.slice(c, end), size) : foldByMap(seriesOfRow, cols[end++]!);
    c = end;
  }
  const firstRow = new Int32Array(count).fill(-1);
  for (let i = 0; i < n; i++) if (firstRow[seriesOfRow[i]!] === -1) firstRow[seriesOfRow[i]!] = i;
  return { seriesOfRow, seriesCount: count, firstRow };
}

function foldByTable(ids: Int32Array, cols: readonly KeyCodes[], size: number): number {
  const lut = new Int32Array(size).fill(-1);
  const codes = cols.map((c) => c.codes);
  const cards = Int32Array.from(cols, (c) => Math.max(1, c.cardinality));
  let fresh = 0;
  for (let i = 0; i < ids.length; i++) {
    let x = ids[i]!;
    for (let j = 0; j < codes.length; j++) x = x * cards[j]! + codes[j]![i]!;
    let id = lut[x]!;
    if (id < 0) lut[x] = id = fresh++;
    ids[i] = id;
  }
  return fresh;
}

function foldByMap(ids: Int32Array, col: KeyCodes): number {
  const card = Math.max(1, col.cardinality);
  const map = new Map<number, number>();
  for (let i = 0; i < ids.length; i++) {
    const x = ids[i]! * card + col.codes[i]!;
    let id = map.get(x);
    if (id === undefined) map.set(x, (id = map.size));
    ids[i] = id;
  }
  return map.size;
}

/** rank[id] = position of series `id` when series are ordered by their key values (UTF-8 byte order, column by column). */
function rankSeries(count: number, firstRow: Int32Array, cols: readonly KeyCodes[]): Int32Array {
  const ids = Array.from({ length: count }, (_, i) => i);
  ids.sort((a, b) => {
    const ra = firstRow[a]!;
    const rb = firstRow[b]!;
    for (const c of cols) {
      const d = c.rank[c.codes[ra]!]! - c.rank[c.codes[rb]!]!;
      if (d !== 0) return d;
    }
    return 0;
  });
  const rank = new Int32Array(count);
  ids.forEach((id, r) => (rank[id] = r));
  return rank;
}
