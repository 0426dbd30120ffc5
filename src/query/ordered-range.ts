import { BLOCK_SHIFT, countVisible, dayPosition, positionAfter, skipHidden, type DateOrder } from '../store/date-order.js';
import type { Table } from '../store/table.js';

/**
 * A range page (latest=false) read from the generation's (date, series) order rather than
 * merged from one run per series: the page is the next `limit` visible keys of one run of
 * that order, so it costs the rows it returns (and the blocks it skips), wherever the
 * cursor stands. `mask` (null: every series) keeps the series a filter selected, when
 * they are a large share of the dataset (page-resolver.ts decides).
 */
export interface OrderedRange {
  /** in: the dates asked for, [from, to] */
  from: number;
  to: number;
  /** in: the instant the page is read under (Infinity: every version) */
  t: number;
  /** in: keys a page holds at most */
  limit: number;
  /** positions of the order in range: [first, end) */
  first: number;
  end: number;
  /** where this page starts reading */
  start: number;
}

/**
 * The part of the order a query covers, into `out` (its from, to and t set): dates
 * [from, to], and no date past the greatest one with a version visible under T (no key
 * after it has one). `after`: the page starts past that (date, series).
 */
export function orderedRange(table: Table, o: DateOrder, after: { lastDate: number; lastSeries: number } | null, out: OrderedRange): OrderedRange {
  const { from, to, t } = out;
  let last = to;
  if (t !== Infinity) {
    const visible = table.latestDateByThr.query(t);
    if (visible === null || visible < last) last = visible ?? from - 1;
  }
  out.first = dayPosition(o, from);
  out.end = last < from ? out.first : dayPosition(o, last + 1);
  out.start = out.first;
  if (after !== null) out.start = Math.max(out.first, Math.min(out.end, positionAfter(o, table.keySeries, after.lastDate, after.lastSeries)));
  return out;
}

/** Up to `range.limit` visible keys of the order from `range.start` to `range.end`, each as the row PIT-4 picks under T, into rows; returns the count. */
export function readOrdered(table: Table, o: DateOrder, range: OrderedRange, mask: Uint8Array | null, rows: Int32Array): number {
  const { start, end, t, limit } = range;
  const { keys, blockMax } = o;
  const { keyThr, keySeries, keyRowStart, rowThr } = table;
  let count = 0;
  let i = start;
  while (i < end && count < limit) {
    if (t !== Infinity) i = skipHidden(o, i, end, t);
    if (i >= end) break;
    const blockEnd = Math.min(end, ((i >> BLOCK_SHIFT) + 1) << BLOCK_SHIFT);
    const allVisible = blockMax[i >> BLOCK_SHIFT]! <= t;
    for (; i < blockEnd && count < limit; i++) {
      const k = keys[i]!;
      if (mask !== null && mask[keySeries[k]!] === 0) continue;
      if (!allVisible && keyThr[k]! > t) continue;
      // resolveKey inlined: the last version of the key T reaches (one exists: keyThr <= T)
      let r = keyRowStart[k + 1]! - 1;
      while (rowThr[r]! > t) r--;
      rows[count++] = r;
    }
  }
  return count;
}

/** Visible keys in the range (every series): the answer's total, counted a block at a time. */
export function countOrdered(table: Table, o: DateOrder, range: OrderedRange): number {
  return countVisible(o, table.keyThr, range.first, range.end, range.t);
}
