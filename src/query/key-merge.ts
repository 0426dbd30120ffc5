import type { DayArray } from '../store/table.js';

/**
 * Keys of several series, merged into the contract's output order (date, then series; a
 * series index is its rank in that order, see store/table.ts). Each series contributes a
 * run of its keys [k, end), which are contiguous and in date order, so a min-heap of one
 * cursor per series yields every key of every run once, in order, in O(log series) each.
 *
 * Owned by a resolver, reused across requests: the heap arrays grow to the most series
 * seen and are never allocated per request.
 */
export class KeyMerge {
  private heapDate = new Int32Array(256);
  private heapSeries = new Int32Array(256);
  private heapKey = new Int32Array(256);
  private heapEnd = new Int32Array(256);
  private size = 0;
  private keyDate: DayArray = new Int32Array(0);

  /** Starts an empty merge over a table's key dates, with room for `series` runs. */
  reset(keyDate: DayArray, series: number): void {
    this.keyDate = keyDate;
    this.size = 0;
    if (this.heapDate.length < series) {
      const n = Math.max(series, this.heapDate.length * 2);
      this.heapDate = new Int32Array(n);
      this.heapSeries = new Int32Array(n);
      this.heapKey = new Int32Array(n);
      this.heapEnd = new Int32Array(n);
    }
  }

  /** Adds series s's keys [k, end); an empty run is ignored. */
  add(s: number, k: number, end: number): void {
    if (k >= end) return;
    let i = this.size++;
    this.heapDate[i] = this.keyDate[k]!;
    this.heapSeries[i] = s;
    this.heapKey[i] = k;
    this.heapEnd[i] = end;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(i, p)) break;
      this.swap(i, p);
      i = p;
    }
  }

  get empty(): boolean {
    return this.size === 0;
  }

  /** The next key in (date, series) order; only when not empty. */
  peek(): number {
    return this.heapKey[0]!;
  }

  /** Date of the next key (what a caller bounding by date compares); only when not empty. */
  peekDate(): number {
    return this.heapDate[0]!;
  }

  /** Takes the next key (peek) off the merge. */
  pop(): void {
    const k = this.heapKey[0]!;
    if (k + 1 < this.heapEnd[0]!) {
      this.heapDate[0] = this.keyDate[k + 1]!;
      this.heapKey[0] = k + 1;
    } else {
      const last = --this.size;
      if (last === 0) return;
      this.heapDate[0] = this.heapDate[last]!;
      this.heapSeries[0] = this.heapSeries[last]!;
      this.heapKey[0] = this.heapKey[last]!;
      this.heapEnd[0] = this.heapEnd[last]!;
    }
    this.siftDown(0);
  }

  private less(a: number, b: number): boolean {
    const d = this.heapDate;
    return d[a]! < d[b]! || (d[a] === d[b] && this.heapSeries[a]! < this.heapSeries[b]!);
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

  private siftDown(i: number): void {
    const size = this.size;
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

/** First key index in [lo, hi) whose date is >= day (keys of one series are in date order). */
export function lowerBoundDate(keyDate: DayArray, lo: number, hi: number, day: number): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyDate[mid]! < day) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
