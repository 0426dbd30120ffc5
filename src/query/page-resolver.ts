import type { Mutable } from '../mutable.js';
import type { Table } from '../store/table.js';
import type { CursorState } from './cursor.js';
import type { Query } from './query.js';
import { KeyMerge, lowerBoundDate } from './key-merge.js';
import type { DateOrderIndex } from './date-order-index.js';
import { lastVisibleKey } from '../store/last-visible.js';
import type { LastVisibleIndex } from './last-visible-index.js';
import { countOrdered, orderedRange, readOrdered, type OrderedRange } from './ordered-range.js';
import { selectSeries } from './select-series.js';
import type { SeriesValueIndex } from './series-value-index.js';

/** Up to this many series, a range page is merged by sweeping dates rather than with a heap. */
export const SWEEP_MAX_SERIES = 16;

/**
 * A filtered range page reads the generation's (date, series) order, skipping the series
 * not selected, when at least one series in this many is selected: each row then costs at
 * most this many keys read in order, less than a heap's sift over that many runs.
 */
export const ORDER_MAX_SKIP = 8;

/**
 * One page of an answer: the physical row ids to render, in output order. The page and
 * `rows` are the resolver's scratch, refilled by its next call (the caller writes the page
 * before resolving again).
 */
export interface Page {
  /** the resolver's scratch: only [0, count) is the page's (no view cut per request) */
  readonly rows: Int32Array;
  readonly count: number;
  readonly total: number;
  /** position after the last row served, when more rows follow */
  readonly next: { lastDate: number; lastSeries: number; lastExtra: number; offset: number } | null;
}

/** Where a continued chain resumes; null for a first page. */
export type Resume = Pick<CursorState, 'lastDate' | 'lastSeries' | 'lastExtra' | 'offset' | 'total'> | null;

/** What a page is resolved from: a generation's table and its indexes (a Generation is one). */
export interface Resolvable {
  readonly table: Table;
  readonly seriesIndex: SeriesValueIndex;
  readonly dateOrder: DateOrderIndex;
  readonly lastVisible: LastVisibleIndex;
}

/**
 * The version of key k visible under T that PIT-4 picks: rows of a key are in
 * (observed, ingested, position) order, so it is the last one whose threshold T reaches.
 */
export function resolveKey(table: Table, k: number, t: number): number {
  const thr = table.rowThr;
  for (let r = table.keyRowStart[k + 1]! - 1, a = table.keyRowStart[k]!; r >= a; r--) if (thr[r]! <= t) return r;
  return -1;
}

/**
 * Resolves a query to one page of row ids (contract 2, PIT-4). One per serving thread (or
 * per file-channel answer): it owns the scratch arrays a page is built in, grown to the
 * largest page and dataset seen and then reused, so a request allocates nothing
 * proportional to the data. Not re-entrant: a page is only valid until the next call.
 */
export class PageResolver {
  private rows = new Int32Array(1024);
  private series = new Int32Array(256);
  private keys = new Int32Array(256);
  private composite = new Float64Array(256);
  /** per selected series: the next key of its run, and the run's end (rangePage) */
  private head = new Int32Array(256);
  private end = new Int32Array(256);
  /** per series: 1 when selected (a filtered page read from the date order), cleared after */
  private mask = new Uint8Array(256);
  /** latest: the series found, then in output order; and the per-date counts that order them */
  private ordered = new Int32Array(256);
  private dayCount = new Int32Array(256);
  private readonly range: OrderedRange = { from: 0, to: 0, t: 0, limit: 0, first: 0, end: 0, start: 0 };
  private readonly merge = new KeyMerge();
  /** the page every resolve returns, refilled (like `rows`, valid until the next call: no object per request) */
  private readonly page: Mutable<Page> = { rows: this.rows, count: 0, total: 0, next: null };

  resolve(gen: Resolvable, q: Query, resume: Resume): Page {
    const table = gen.table;
    const t = q.asOfUs ?? Infinity;
    this.ensure(q.limit, table.seriesCount);
    // Every series, every row: a run of the date order (the filtered case decides in rangePage).
    if (!q.latest && q.filters.length === 0) return this.orderedPage(gen, q, t, 0, resume);
    const m = selectSeries(table, gen.seriesIndex, q.filters, this.series);
    return q.latest ? this.latestPage(gen, q, t, m, resume) : this.rangePage(gen, q, t, m, resume);
  }

  private ensure(limit: number, series: number): void {
    if (this.rows.length < limit) this.rows = new Int32Array(limit);
    if (this.series.length < series) {
      const n = Math.max(series, this.series.length * 2);
      this.series = new Int32Array(n);
      this.keys = new Int32Array(n);
      this.composite = new Float64Array(n);
      this.head = new Int32Array(n);
      this.end = new Int32Array(n);
      this.mask = new Uint8Array(n);
      this.ordered = new Int32Array(n);
    }
  }

  /**
   * latest: per series, the greatest date (<= date_to) with a visible version; then (date,
   * series) order. A series' last key in range is usually visible (T is recent), which one
   * comparison confirms; otherwise, over many series, one binary search of the generation's
   * per-series suffix minimum (store/last-visible.ts) finds the last visible one, and over
   * a few, or before a date_to that cuts the series short, the min-tree does. The series found
   * are ordered by counting their dates when those span few days (they end together), else
   * by sorting.
   */
  private latestPage(gen: Resolvable, q: Query, t: number, m: number, resume: Resume): Page {
    const table = gen.table;
    const { keyDate, keyThr, seriesKeyStart, keyThrTree } = table;
    const { series, keys, ordered, rows } = this;
    let suffix: Float64Array | null = null;
    let found = 0;
    let minD = 2147483647;
    let maxD = -2147483648;
    for (let i = 0; i < m; i++) {
      const s = series[i]!;
      const lo = seriesKeyStart[s]!;
      const end = seriesKeyStart[s + 1]!;
      const hi = q.dateTo === null ? end : lowerBoundDate(keyDate, lo, end, q.dateTo + 1);
      let k = hi - 1;
      if (hi <= lo || keyThr[k]! > t) {
        if (m > SWEEP_MAX_SERIES) {
          suffix ??= gen.lastVisible.get();
          k = lastVisibleKey(suffix, lo, end, t);
          // past date_to: the last visible key before it is further back
          if (k >= hi) k = keyThrTree.rightmostAtMost(lo, hi - 1, t);
        } else k = keyThrTree.rightmostAtMost(lo, hi - 1, t);
      }
      if (k < 0) continue;
      keys[s] = k;
      ordered[found++] = s;
      const d = keyDate[k]!;
      if (d < minD) minD = d;
      if (d > maxD) maxD = d;
    }
    if (found > 1) this.orderLatest(table, found, minD, maxD);
    let start = 0;
    if (resume !== null) {
      // First series past (lastDate, lastSeries): the order is by (date, series).
      let hi = found;
      while (start < hi) {
        const mid = (start + hi) >>> 1;
        const s = ordered[mid]!;
        const d = keyDate[keys[s]!]!;
        if (d < resume.lastDate || (d === resume.lastDate && s <= resume.lastSeries)) start = mid + 1;
        else hi = mid;
      }
    }
    const offset = resume?.offset ?? 0;
    const total = resume?.total ?? found;
    let count = 0;
    for (let i = start; i < found && count < q.limit; i++) rows[count++] = resolveKey(table, keys[ordered[i]!]!, t);
    return this.finish(table, count, total, offset);
  }

  /** ordered[0, found): series ascending, each with its key in keys[s]; reordered by (key date, series). */
  private orderLatest(table: Table, found: number, minD: number, maxD: number): void {
    const { keyDate, seriesCount, minDate } = table;
    const { keys, ordered } = this;
    const span = maxD - minD + 1;
    if (span > LATEST_COUNT_SPAN * found) {
      const composite = this.composite;
      for (let i = 0; i < found; i++) {
        const s = ordered[i]!;
        composite[i] = (keyDate[keys[s]!]! - minDate) * seriesCount + s;
      }
      composite.subarray(0, found).sort();
      for (let i = 0; i < found; i++) ordered[i] = composite[i]! % seriesCount;
      return;
    }
    // Stable counting sort by date: series stay ascending within a date.
    if (this.dayCount.length < span + 1) this.dayCount = new Int32Array(Math.max(span + 1, this.dayCount.length * 2));
    const count = this.dayCount;
    count.fill(0, 0, span + 1);
    for (let i = 0; i < found; i++) count[keyDate[keys[ordered[i]!]!]! - minD + 1]!++;
    for (let d = 0; d < span; d++) count[d + 1]! += count[d]!;
    const out = this.head; // free here: head is rangePage's
    for (let i = 0; i < found; i++) {
      const s = ordered[i]!;
      out[count[keyDate[keys[s]!]! - minD]!++] = s;
    }
    ordered.set(out.subarray(0, found));
  }

  /** date range (or latest=false): every key in range with a visible version, merged by (date, series). */
  private rangePage(gen: Resolvable, q: Query, t: number, m: number, resume: Resume): Page {
    const table = gen.table;
    if (m > SWEEP_MAX_SERIES && m * ORDER_MAX_SKIP >= table.seriesCount) {
      const mask = this.mask;
      for (let i = 0; i < m; i++) mask[this.series[i]!] = 1;
      const page = this.orderedPage(gen, q, t, m, resume);
      for (let i = 0; i < m; i++) mask[this.series[i]!] = 0;
      return page;
    }
    const { keyDate, seriesKeyStart } = table;
    const { series } = this;
    const from = q.dateFrom ?? -2147483648;
    const to = q.dateTo ?? 2147483646;

    // Each series' run of keys from the cursor on: [head, end).
    const { head, end } = this;
    for (let i = 0; i < m; i++) {
      const s = series[i]!;
      end[i] = lowerBoundDate(keyDate, seriesKeyStart[s]!, seriesKeyStart[s + 1]!, to + 1);
      let startDate = from;
      if (resume !== null) {
        const afterCursor = s > resume.lastSeries ? resume.lastDate : resume.lastDate + 1;
        if (afterCursor > startDate) startDate = afterCursor;
      }
      head[i] = lowerBoundDate(keyDate, seriesKeyStart[s]!, end[i]!, startDate);
    }
    const count = m <= SWEEP_MAX_SERIES ? this.sweep(table, m, t, q.limit) : this.heapMerge(table, m, t, q.limit);
    // A first page that is not full took every key in range that is visible under t, which
    // is what total counts: the counting pass is only needed when more may follow (a
    // walk-forward loop's windows always fit in one page, and skip it).
    const total = resume?.total ?? (count < q.limit ? count : this.countSeries(table, m, from, to, t));
    return this.finish(table, count, total, resume?.offset ?? 0);
  }

  /**
   * A range page read from the date order (ordered-range.ts): every series (m = 0), or the
   * m series of `series` marked in `mask`. Its total is counted a block at a time over every series,
   * or per selected series.
   */
  private orderedPage(gen: Resolvable, q: Query, t: number, m: number, resume: Resume): Page {
    const table = gen.table;
    const order = gen.dateOrder.get();
    const range = this.range;
    range.from = q.dateFrom ?? -2147483648;
    range.to = q.dateTo ?? 2147483646;
    range.t = t;
    range.limit = q.limit;
    orderedRange(table, order, resume, range);
    const count = readOrdered(table, order, range, m === 0 ? null : this.mask, this.rows);
    let total = resume?.total ?? (count < q.limit ? count : -1);
    if (total < 0) total = m === 0 ? countOrdered(table, order, range) : this.countSeries(table, m, range.from, range.to, t);
    return this.finish(table, count, total, resume?.offset ?? 0);
  }

  /** Keys in [from, to] of the m selected series with a version visible under T. */
  private countSeries(table: Table, m: number, from: number, to: number, t: number): number {
    const { keyDate, keyThr, seriesKeyStart } = table;
    const series = this.series;
    let total = 0;
    for (let i = 0; i < m; i++) {
      const s = series[i]!;
      const lo = lowerBoundDate(keyDate, seriesKeyStart[s]!, seriesKeyStart[s + 1]!, from);
      const hi = lowerBoundDate(keyDate, lo, seriesKeyStart[s + 1]!, to + 1);
      if (t === Infinity) total += hi - lo;
      else for (let k = lo; k < hi; k++) if (keyThr[k]! <= t) total++;
    }
    return total;
  }

  /**
   * The runs merged into (date, series) order by sweeping dates: find the earliest head
   * date, then take every run at that date in series order (`series` is ascending). A
   * panel of a few series shares its dates, so one scan yields about m rows; the heap's
   * sift per row costs more there. Above SWEEP_MAX_SERIES the scan would cost more.
   */
  private sweep(table: Table, m: number, t: number, limit: number): number {
    const { keyDate, keyThr } = table;
    const { head, end, rows } = this;
    let count = 0;
    if (m === 1) {
      // One series (a walk-forward loop's window): its run is already in date order.
      for (let k = head[0]!, e = end[0]!; k < e && count < limit; k++) if (keyThr[k]! <= t) rows[count++] = resolveKey(table, k, t);
      return count;
    }
    while (count < limit) {
      let d = 2147483647;
      for (let i = 0; i < m; i++) if (head[i]! < end[i]! && keyDate[head[i]!]! < d) d = keyDate[head[i]!]!;
      if (d === 2147483647) break;
      for (let i = 0; i < m && count < limit; i++) {
        const k = head[i]!;
        if (k < end[i]! && keyDate[k] === d) {
          if (keyThr[k]! <= t) rows[count++] = resolveKey(table, k, t);
          head[i] = k + 1;
        }
      }
    }
    return count;
  }

  /** The runs merged into (date, series) order with a heap of one cursor per series. */
  private heapMerge(table: Table, m: number, t: number, limit: number): number {
    const { keyDate, keyThr } = table;
    const { series, head, end, rows, merge } = this;
    merge.reset(keyDate, m);
    for (let i = 0; i < m; i++) merge.add(series[i]!, head[i]!, end[i]!);
    let count = 0;
    while (!merge.empty && count < limit) {
      const k = merge.peek();
      if (keyThr[k]! <= t) rows[count++] = resolveKey(table, k, t);
      merge.pop();
    }
    return count;
  }

  private finish(table: Table, count: number, total: number, offset: number): Page {
    const rows = this.rows;
    let next: Page['next'] = null;
    if (count > 0 && offset + count < total) {
      const last = rows[count - 1]!;
      const k = keyOfRow(table, last);
      next = { lastDate: table.keyDate[k]!, lastSeries: table.keySeries[k]!, lastExtra: 0, offset: offset + count };
    }
    const page = this.page;
    page.rows = rows;
    page.count = count;
    page.total = total;
    page.next = next;
    return page;
  }
}

/** latest: the series found are ordered by counting their dates when those span at most this many days per series. */
const LATEST_COUNT_SPAN = 4;

/** The key holding a physical row: binary search over key starts. */
export function keyOfRow(table: Table, row: number): number {
  const starts = table.keyRowStart;
  let lo = 0;
  let hi = table.keyCount - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (starts[mid]! <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
