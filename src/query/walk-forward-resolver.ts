import type { BoolColumn, Date32Column } from '../store/column.js';
import type { Table } from '../store/table.js';
import { dayEndUs, US_PER_DAY } from '../time/instant.js';
import { dayPosition } from '../store/date-order.js';
import { KeyMerge, lowerBoundDate } from './key-merge.js';
import { ORDER_MAX_SKIP, SWEEP_MAX_SERIES, type Page, type Resolvable, type Resume } from './page-resolver.js';
import type { WalkForwardQuery } from './parse-walk-forward.js';
import { selectSeries } from './select-series.js';

/** A walk-forward page: the rows, and the decision date of each (output position i). */
export interface WalkForwardPage extends Page {
  /** `decision_date` of output row i at values[i]; scratch, valid until the next call */
  readonly decisionDate: Date32Column;
  /** `floor_applied` of output row i (contract 16): its decision date lies before the vintage floor */
  readonly floorApplied: BoolColumn;
}

/**
 * Resolves a walk-forward (contract 10) in one pass over the keys, not one query per
 * decision date. For each decision date D the answer is the keys with a date in
 * [D - window, D] and a version visible at T = end of D, each with the version PIT-4 picks.
 *
 * - The keys of the matching series are taken in (date, series) order once: a run of the
 *   generation's date order (docs/decisions.md#date-order) when the series are many (every
 *   series, or a filter selecting one in ORDER_MAX_SKIP or more, through a mask), else
 *   merged from one run per series with a heap; as D advances, keys enter a sliding window (a queue in that order) when D reaches their
 *   date and leave when D - window passes it. So a decision's rows are the window's
 *   entries in order, with no search and no sort.
 * - Each window entry keeps the version chosen so far and the threshold at which the
 *   choice next changes (the least threshold of a later version). T only grows, so the
 *   choice only moves forward: a decision costs one comparison per key, and a key's
 *   versions are scanned again only when one of their thresholds is crossed.
 * - The total (every row of every decision) is counted without walking the decisions: key
 *   k is a row of exactly the decision dates D with max(date, first day its keyThr is
 *   reached) <= D <= date + window, a range of the decision grid.
 *
 * A cursor resumes at (decision date, date, series) of the last row served. One per
 * serving thread; scratch grows to the largest window and page and is reused.
 */
export class WalkForwardResolver {
  private series = new Int32Array(256);
  /** per series: 1 when a filter selected it (keys read from the date order), cleared after */
  private mask = new Uint8Array(256);
  private readonly merge = new KeyMerge();
  /** the sliding window: entries [head, tail) are keys in (date, series) order */
  private wKey = new Int32Array(1024);
  private wChosen = new Int32Array(1024);
  private wNext = new Float64Array(1024);
  private rows = new Int32Array(1024);
  private decisionDate: Date32Column = { kind: 'date32', name: 'decision_date', validity: null, values: new Int32Array(1024) };
  private floorApplied: BoolColumn = { kind: 'bool', name: 'floor_applied', validity: null, values: new Uint8Array(1024) };

  resolve(gen: Resolvable, q: WalkForwardQuery, resume: Resume): WalkForwardPage {
    const table = gen.table;
    if (this.series.length < table.seriesCount) {
      const n = Math.max(table.seriesCount, this.series.length * 2);
      this.series = new Int32Array(n);
      this.mask = new Uint8Array(n);
    }
    if (this.rows.length < q.limit) {
      this.rows = new Int32Array(q.limit);
      // A new Column object: writers compiled for the old one rebind (json-row-layout.ts).
      this.decisionDate = { kind: 'date32', name: 'decision_date', validity: null, values: new Int32Array(q.limit) };
      this.floorApplied = { kind: 'bool', name: 'floor_applied', validity: null, values: new Uint8Array(q.limit) };
    }
    const m = selectSeries(table, gen.seriesIndex, q.filters, this.series);
    const total = resume?.total ?? this.countRows(table, q, m);
    const offset = resume?.offset ?? 0;
    const firstJ = resume === null ? 0 : (resume.lastExtra - q.decisionFrom) / q.step;
    const lastDecision = q.decisionFrom + (q.decisions - 1) * q.step;
    const d0 = q.decisionFrom + firstJ * q.step;

    const { keyDate, keySeries, seriesKeyStart } = table;
    const merge = this.merge;
    // Many series: their keys are a run of the date order [op, oe), a mask keeping the selected ones.
    const ordered = m > SWEEP_MAX_SERIES && m * ORDER_MAX_SKIP >= table.seriesCount;
    const o = ordered ? gen.dateOrder.get() : null;
    const order = o?.keys ?? null;
    const mask = ordered && m < table.seriesCount ? this.mask : null;
    let op = 0;
    let oe = 0;
    if (o !== null) {
      op = dayPosition(o, d0 - q.window);
      oe = dayPosition(o, lastDecision + 1);
      if (mask !== null) for (let i = 0; i < m; i++) mask[this.series[i]!] = 1;
    } else {
      merge.reset(keyDate, m);
      for (let i = 0; i < m; i++) {
        const s = this.series[i]!;
        const lo = seriesKeyStart[s]!;
        const end = lowerBoundDate(keyDate, lo, seriesKeyStart[s + 1]!, lastDecision + 1);
        merge.add(s, lowerBoundDate(keyDate, lo, end, d0 - q.window), end);
      }
    }

    const { rows } = this;
    const dd = this.decisionDate.values;
    const fa = this.floorApplied.values;
    let head = 0;
    let tail = 0;
    let count = 0;
    let lastKey = -1;
    let lastD = 0;
    for (let j = firstJ; j < q.decisions && count < q.limit; j++) {
      const d = q.decisionFrom + j * q.step;
      const t = dayEndUs(d);
      const oldest = d - q.window;
      const before = d < q.floorDay ? 1 : 0;
      while (head < tail && keyDate[this.wKey[head]!]! < oldest) head++;
      if (order !== null) {
        for (; op < oe; op++) {
          const k = order[op]!;
          if (keyDate[k]! > d) break;
          if (keyDate[k]! < oldest || (mask !== null && mask[keySeries[k]!] === 0)) continue;
          if (tail === this.wKey.length) {
            this.makeRoom(head, tail);
            tail -= head;
            head = 0;
          }
          this.enter(table, tail++, k);
        }
      } else {
        while (!merge.empty && merge.peekDate() <= d) {
          const k = merge.peek();
          merge.pop();
          if (keyDate[k]! < oldest) continue; // between two decisions' windows: in none
          if (tail === this.wKey.length) {
            this.makeRoom(head, tail);
            tail -= head;
            head = 0;
          }
          this.enter(table, tail++, k);
        }
      }
      let i = head;
      if (j === firstJ && resume !== null) {
        // Past the last row served: entries are in (date, series) order.
        while (i < tail) {
          const k = this.wKey[i]!;
          const kd = keyDate[k]!;
          if (kd > resume.lastDate || (kd === resume.lastDate && keySeries[k]! > resume.lastSeries)) break;
          i++;
        }
      }
      const { wKey, wChosen, wNext } = this;
      for (; i < tail && count < q.limit; i++) {
        if (wNext[i]! <= t) this.advance(table, i, t);
        const r = wChosen[i]!;
        if (r < 0) continue;
        rows[count] = r;
        dd[count] = d;
        fa[count] = before;
        count++;
        lastKey = wKey[i]!;
        lastD = d;
      }
    }

    if (mask !== null) for (let i = 0; i < m; i++) mask[this.series[i]!] = 0;
    let next: Page['next'] = null;
    if (count > 0 && offset + count < total) next = { lastDate: keyDate[lastKey]!, lastSeries: keySeries[lastKey]!, lastExtra: lastD, offset: offset + count };
    return { rows, count, total, next, decisionDate: this.decisionDate, floorApplied: this.floorApplied };
  }

  /** Key k enters the window at entry i, its version not chosen yet. */
  private enter(table: Table, i: number, k: number): void {
    this.wKey[i] = k;
    this.wChosen[i] = -1;
    this.wNext[i] = table.keyThr[k]!;
  }

  /** Entry i's version under T, moved forward to the last version whose threshold T reaches. */
  private advance(table: Table, i: number, t: number): void {
    const k = this.wKey[i]!;
    const thr = table.rowThr;
    const end = table.keyRowStart[k + 1]!;
    const from = Math.max(this.wChosen[i]! + 1, table.keyRowStart[k]!);
    let r = end - 1;
    while (r > from && thr[r]! > t) r--;
    // wNext <= t promised a version after the old choice that T reaches: r is the last one.
    this.wChosen[i] = r;
    let next = Infinity;
    for (let x = r + 1; x < end; x++) if (thr[x]! < next) next = thr[x]!;
    this.wNext[i] = next;
  }

  /**
   * Rows of every decision date: key k of a matching series counts once for each decision
   * date D with max(date, first day T(D) reaches keyThr) <= D <= date + window.
   */
  private countRows(table: Table, q: WalkForwardQuery, m: number): number {
    const { keyDate, keyThr, seriesKeyStart } = table;
    const from = q.decisionFrom;
    const last = from + (q.decisions - 1) * q.step;
    let total = 0;
    for (let i = 0; i < m; i++) {
      const s = this.series[i]!;
      const lo = lowerBoundDate(keyDate, seriesKeyStart[s]!, seriesKeyStart[s + 1]!, from - q.window);
      const hi = lowerBoundDate(keyDate, lo, seriesKeyStart[s + 1]!, last + 1);
      for (let k = lo; k < hi; k++) {
        // The first day D whose end T reaches the threshold: (D + 1) * day - 1 >= thr.
        const visibleDay = Math.ceil((keyThr[k]! + 1) / US_PER_DAY) - 1;
        const a = Math.max(keyDate[k]!, visibleDay, from);
        const b = Math.min(keyDate[k]! + q.window, last);
        if (a > b) continue;
        const first = Math.ceil((a - from) / q.step);
        const lastJ = Math.floor((b - from) / q.step);
        if (lastJ >= first) total += lastJ - first + 1;
      }
    }
    return total;
  }

  /** Moves entries [head, tail) to the front, into arrays twice as large when they are over half full. */
  private makeRoom(head: number, tail: number): void {
    if (tail - head <= this.wKey.length / 2) {
      this.wKey.copyWithin(0, head, tail);
      this.wChosen.copyWithin(0, head, tail);
      this.wNext.copyWithin(0, head, tail);
      return;
    }
    const n = this.wKey.length * 2;
    this.wKey = grown(new Int32Array(n), this.wKey.subarray(head, tail));
    this.wChosen = grown(new Int32Array(n), this.wChosen.subarray(head, tail));
    this.wNext = grown(new Float64Array(n), this.wNext.subarray(head, tail));
  }
}

function grown<A extends Int32Array | Float64Array>(to: A, live: A): A {
  to.set(live);
  return to;
}
