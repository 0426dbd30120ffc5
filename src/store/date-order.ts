import type { DayArray, SeriesArray } from './table.js';

/**
 * The keys of a table in (date, series) order, the contract's output order: an answer that
 * takes every series (latest=false, a date range) is a run of this array, so a page of it
 * is read straight through instead of merging one run per series, and a cursor resumes
 * with one search instead of one per series (docs/decisions.md#date-order).
 *
 * Physical order is (series, date) with series by rank (store/table.ts), so a stable
 * counting sort of the keys by date gives (date, series) in one pass; days are few (a
 * decade is under 4,000), so a day's keys start at dayStart[day - minDate].
 *
 * Per block of BLOCK keys of this order, the least and greatest keyThr: under `as_of` = T a
 * block with blockMin > T holds no visible key and one with blockMax <= T only visible
 * keys. A chain's later pages skip the keys after T a block at a time (the history past
 * an early `as_of`), and a first page counts its total over blocks, scanning only the
 * blocks that straddle T (the keys published around T).
 */
export interface DateOrder {
  /** key ids in (date, series) order */
  readonly keys: Int32Array;
  /** the date of keys[dayStart[0]]: the least key date (0 when there are no keys) */
  readonly minDate: number;
  /** keys of date minDate + d are keys[dayStart[d] .. dayStart[d + 1]); span + 1 entries */
  readonly dayStart: Int32Array;
  readonly span: number;
  /** least and greatest keyThr of keys[b * BLOCK .. (b + 1) * BLOCK) */
  readonly blockMin: Float64Array;
  readonly blockMax: Float64Array;
}

export const BLOCK_SHIFT = 7;
export const BLOCK = 1 << BLOCK_SHIFT;

export function buildDateOrder(keyDate: DayArray, keyThr: Float64Array): DateOrder {
  const n = keyDate.length;
  let minDate = n === 0 ? 0 : Infinity;
  let maxDate = n === 0 ? 0 : -Infinity;
  for (let k = 0; k < n; k++) {
    const d = keyDate[k]!;
    if (d < minDate) minDate = d;
    if (d > maxDate) maxDate = d;
  }
  const span = maxDate - minDate + 1;
  const dayStart = new Int32Array(span + 1);
  for (let k = 0; k < n; k++) dayStart[keyDate[k]! - minDate + 1]!++;
  for (let d = 0; d < span; d++) dayStart[d + 1]! += dayStart[d]!;
  const at = dayStart.slice(0, span);
  const keys = new Int32Array(n);
  for (let k = 0; k < n; k++) keys[at[keyDate[k]! - minDate]!++] = k;

  const blocks = (n + BLOCK - 1) >> BLOCK_SHIFT;
  const blockMin = new Float64Array(blocks);
  const blockMax = new Float64Array(blocks);
  for (let b = 0; b < blocks; b++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (let i = b << BLOCK_SHIFT, e = Math.min(n, i + BLOCK); i < e; i++) {
      const t = keyThr[keys[i]!]!;
      if (t < lo) lo = t;
      if (t > hi) hi = t;
    }
    blockMin[b] = lo;
    blockMax[b] = hi;
  }
  return { keys, minDate, dayStart, span, blockMin, blockMax };
}

/** Position in o.keys of the first key dated `day` or later. */
export function dayPosition(o: DateOrder, day: number): number {
  const d = day - o.minDate;
  if (d <= 0) return 0;
  return d >= o.span ? o.keys.length : o.dayStart[d]!;
}

/** Position in o.keys of the first key after (day, series) in (date, series) order. */
export function positionAfter(o: DateOrder, keySeries: SeriesArray, day: number, series: number): number {
  const d = day - o.minDate;
  if (d < 0) return 0;
  if (d >= o.span) return o.keys.length;
  const keys = o.keys;
  let lo = o.dayStart[d]!;
  let hi = o.dayStart[d + 1]!;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keySeries[keys[mid]!]! <= series) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Keys at positions [lo, hi) visible under T (keyThr <= T), counted a block at a time. */
export function countVisible(o: DateOrder, keyThr: Float64Array, lo: number, hi: number, t: number): number {
  if (t === Infinity || hi <= lo) return Math.max(0, hi - lo);
  const { keys, blockMin, blockMax } = o;
  let n = 0;
  for (let i = lo; i < hi;) {
    const b = i >> BLOCK_SHIFT;
    const e = Math.min(hi, (b + 1) << BLOCK_SHIFT);
    if (blockMax[b]! <= t) n += e - i;
    else if (blockMin[b]! <= t) for (let j = i; j < e; j++) if (keyThr[keys[j]!]! <= t) n++;
    i = e;
  }
  return n;
}

/** The first position in [lo, hi) of a key that may be visible under T: blocks holding none are skipped. */
export function skipHidden(o: DateOrder, lo: number, hi: number, t: number): number {
  const blockMin = o.blockMin;
  while (lo < hi && blockMin[lo >> BLOCK_SHIFT]! > t) lo = ((lo >> BLOCK_SHIFT) + 1) << BLOCK_SHIFT;
  return lo < hi ? lo : hi;
}
