import type { Table } from '../store/table.js';
import type { CursorState } from './cursor.js';
import type { Query } from './query.js';
import { selectSeries } from './select-series.js';
import type { SeriesValueIndex } from './series-value-index.js';

/**
 * One page of an answer: the physical row ids to render, in output order.
 * `rows` is a view into the resolver's scratch memory, reused by its next call (the caller
 * writes the page before resolving again).
 */
export interface Page {
  readonly rows: Int32Array;
  readonly count: number;
  readonly total: number;
  /** position after the last row served, when more rows follow */
  readonly next: { lastDate: number; lastSeries: number; offset: number } | null;
}

/** Where a continued chain resumes; null for a first page. */
export type Resume = Pick<CursorState, 'lastDate' | 'lastSeries' | 'offset' | 'total'> | null;

/** What a page is resolved from: a generation's table and its value index (a Generation is one). */
export interface Resolvable {
  readonly table: Table;
  readonly seriesIndex: SeriesValueIndex;
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

/** First key index in [lo, hi) whose date is >= day. */
function lowerBoundDate(keyDate: Int32Array, lo: number, hi: number, day: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyDate[mid]! < day) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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
  private heapDate = new Int32Array(256);
  private heapSeries = new Int32Array(256);
  private heapKey = new Int32Array(256);
  private heapEnd = new Int32Array(256);

  resolve(gen: Resolvable, q: Query, resume: Resume): Page {
    const table = gen.table;
    const t = q.asOfUs ?? Infinity;
    this.ensure(q.limit, table.seriesCount);
    const m = selectSeries(table, gen.seriesIndex, q.filters, this.series);
    return q.latest ? this.latestPage(table, q, t, m, resume) : this.rangePage(table, q, t, m, resume);
  }

  private ensure(limit: number, series: number): void {
    if (this.rows.length < limit) this.rows = new Int32Array(limit);
    if (this.series.length < series) {
      const n = Math.max(series, this.series.length * 2);
      this.series = new Int32Array(n);
      this.keys = new Int32Array(n);
      this.composite = new Float64Array(n);
      this.heapDate = new Int32Array(n);
      this.heapSeries = new Int32Array(n);
      this.heapKey = new Int32Array(n);
      this.heapEnd = new Int32Array(n);
    }
  }

  /** latest: per series, the greatest date (<= date_to) with a visible version; then (date, series) order. */
  private latestPage(table: Table, q: Query, t: number, m: number, resume: Resume): Page {
    const { keyDate, seriesKeyStart, keyThrTree, seriesCount, minDate } = table;
    const { series, keys, composite, rows } = this;
    let found = 0;
    for (let i = 0; i < m; i++) {
      const s = series[i]!;
      const lo = seriesKeyStart[s]!;
      const end = seriesKeyStart[s + 1]!;
      const hi = q.dateTo === null ? end : lowerBoundDate(keyDate, lo, end, q.dateTo + 1);
      const k = keyThrTree.rightmostAtMost(lo, hi - 1, t);
      if (k < 0) continue;
      keys[s] = k;
      composite[found++] = (keyDate[k]! - minDate) * seriesCount + s;
    }
    const sorted = composite.subarray(0, found).sort();
    let start = 0;
    if (resume !== null) {
      const after = (resume.lastDate - minDate) * seriesCount + resume.lastSeries;
      while (start < found && sorted[start]! <= after) start++;
    }
    const offset = resume?.offset ?? 0;
    const total = resume?.total ?? found;
    let count = 0;
    for (let i = start; i < found && count < q.limit; i++) {
      const s = sorted[i]! % seriesCount;
      rows[count++] = resolveKey(table, keys[s]!, t);
    }
    return this.finish(table, count, total, offset);
  }

  /** date range (or latest=false): every key in range with a visible version, merged by (date, series). */
  private rangePage(table: Table, q: Query, t: number, m: number, resume: Resume): Page {
    const { keyDate, keyThr, seriesKeyStart } = table;
    const { series, rows } = this;
    const from = q.dateFrom ?? -2147483648;
    const to = q.dateTo ?? 2147483646;

    let total = resume?.total ?? -1;
    if (total < 0) {
      total = 0;
      for (let i = 0; i < m; i++) {
        const s = series[i]!;
        const lo = lowerBoundDate(keyDate, seriesKeyStart[s]!, seriesKeyStart[s + 1]!, from);
        const hi = lowerBoundDate(keyDate, lo, seriesKeyStart[s + 1]!, to + 1);
        if (t === Infinity) total += hi - lo;
        else for (let k = lo; k < hi; k++) if (keyThr[k]! <= t) total++;
      }
    }

    // A min-heap of the series' next keys, ordered by (date, series).
    let size = 0;
    for (let i = 0; i < m; i++) {
      const s = series[i]!;
      const end = lowerBoundDate(keyDate, seriesKeyStart[s]!, seriesKeyStart[s + 1]!, to + 1);
      let startDate = from;
      if (resume !== null) {
        const afterCursor = s > resume.lastSeries ? resume.lastDate : resume.lastDate + 1;
        if (afterCursor > startDate) startDate = afterCursor;
      }
      const k = lowerBoundDate(keyDate, seriesKeyStart[s]!, end, startDate);
      if (k < end) size = this.heapPush(size, keyDate[k]!, s, k, end);
    }

    const { heapDate, heapSeries, heapKey, heapEnd } = this;
    let count = 0;
    while (size > 0 && count < q.limit) {
      const k = heapKey[0]!;
      const end = heapEnd[0]!;
      if (keyThr[k]! <= t) rows[count++] = resolveKey(table, k, t);
      if (k + 1 < end) {
        heapDate[0] = keyDate[k + 1]!;
        heapKey[0] = k + 1;
        this.siftDown(0, size);
      } else {
        size--;
        if (size > 0) {
          heapDate[0] = heapDate[size]!;
          heapSeries[0] = heapSeries[size]!;
          heapKey[0] = heapKey[size]!;
          heapEnd[0] = heapEnd[size]!;
          this.siftDown(0, size);
        }
      }
    }
    return this.finish(table, count, total, resume?.offset ?? 0);
  }

  private finish(table: Table, count: number, total: number, offset: number): Page {
    const rows = this.rows.subarray(0, count);
    let next: Page['next'] = null;
    if (count > 0 && offset + count < total) {
      const last = rows[count - 1]!;
      const k = keyOfRow(table, last);
      next = { lastDate: table.keyDate[k]!, lastSeries: table.keySeries[k]!, offset: offset + count };
    }
    return { rows, count, total, next };
  }

  private less(a: number, b: number): boolean {
    const d = this.heapDate;
    const s = this.heapSeries;
    return d[a]! < d[b]! || (d[a] === d[b] && s[a]! < s[b]!);
  }

  private swap(a: number, b: number): void {
    const { heapDate, heapSeries, heapKey, heapEnd } = this;
    let x = heapDate[a]!;
    heapDate[a] = heapDate[b]!;
    heapDate[b] = x;
    x = heapSeries[a]!;
    heapSeries[a] = heapSeries[b]!;
    heapSeries[b] = x;
    x = heapKey[a]!;
    heapKey[a] = heapKey[b]!;
    heapKey[b] = x;
    x = heapEnd[a]!;
    heapEnd[a] = heapEnd[b]!;
    heapEnd[b] = x;
  }

  private heapPush(size: number, date: number, s: number, k: number, end: number): number {
    let i = size;
    this.heapDate[i] = date;
    this.heapSeries[i] = s;
    this.heapKey[i] = k;
    this.heapEnd[i] = end;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
    return size + 1;
  }

  private siftDown(i: number, size: number): void {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) return;
      const r = l + 1;
      const c = r < size && this.less(r, l) ? r : l;
      if (!this.less(c, i)) return;
      this.swap(i, c);
      i = c;
    }
  }
}

/** The key holding a physical row: binary search over key starts. */
function keyOfRow(table: Table, row: number): number {
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
