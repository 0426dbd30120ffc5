import type { TimestampColumn } from '../store/column.js';
import type { Table } from '../store/table.js';
import { KeyMerge, lowerBoundDate } from './key-merge.js';
import type { Page, Resolvable, Resume } from './page-resolver.js';
import type { VintagesQuery } from './parse-vintages.js';
import { selectSeries } from './select-series.js';

/** A vintages page: the versions, and when each was the answer (output position i). */
export interface VintagesPage extends Page {
  /** scratch, valid until the next call */
  readonly visibleFrom: TimestampColumn;
  /** null (validity 0) = still the answer, or (with as_of) replaced only after as_of */
  readonly visibleTo: TimestampColumn;
}

/**
 * Resolves the revision history of keys (contract 11) from the thresholds the store keeps
 * (store/table.ts: version r is visible under T exactly when T >= rowThr[r], and PIT-4
 * picks the last visible one in the key's physical order). So version r is what `as_of`
 * = T answers for T in [rowThr[r], least threshold of a later version): a version is
 * listed when that interval is not empty, with those two ends as `visible_from` and
 * `visible_to`. One backward pass over a key's versions gives every interval; the listed
 * versions of a key come out in physical order, which is `visible_from` order, and the
 * intervals tile time from the key's first visibility on.
 *
 * A cursor resumes at (date, series, physical row) of the last version served. One per
 * serving thread; scratch grows to the largest page and key and is reused.
 */
export class VintagesResolver {
  private series = new Int32Array(256);
  private readonly merge = new KeyMerge();
  private rows = new Int32Array(1024);
  private visibleFrom = vintageColumn('visible_from', 1024, false);
  private visibleTo = vintageColumn('visible_to', 1024, true);
  /** one key's listed versions, newest first: row, from, to */
  private kRow = new Int32Array(64);
  private kFrom = new Float64Array(64);
  private kTo = new Float64Array(64);
  private kLen = 0;

  resolve(gen: Resolvable, q: VintagesQuery, resume: Resume): VintagesPage {
    const table = gen.table;
    if (this.series.length < table.seriesCount) this.series = new Int32Array(Math.max(table.seriesCount, this.series.length * 2));
    if (this.rows.length < q.limit) {
      this.rows = new Int32Array(q.limit);
      // New Column objects: writers compiled for the old ones rebind (json-row-layout.ts).
      this.visibleFrom = vintageColumn('visible_from', q.limit, false);
      this.visibleTo = vintageColumn('visible_to', q.limit, true);
    }
    const m = selectSeries(table, gen.seriesIndex, q.filters, this.series);
    const t = q.asOfUs ?? Infinity;
    const from = q.dateFrom ?? -2147483648;
    const to = q.dateTo ?? 2147483646;
    const { keyDate, keySeries, keyThr, seriesKeyStart } = table;

    let total = resume?.total ?? -1;
    if (total < 0) {
      total = 0;
      for (let i = 0; i < m; i++) {
        const s = this.series[i]!;
        const lo = lowerBoundDate(keyDate, seriesKeyStart[s]!, seriesKeyStart[s + 1]!, from);
        const hi = lowerBoundDate(keyDate, lo, seriesKeyStart[s + 1]!, to + 1);
        for (let k = lo; k < hi; k++) if (keyThr[k]! <= t) total += q.firstOnly ? 1 : this.listKey(table, k, t);
      }
    }

    const merge = this.merge;
    merge.reset(keyDate, m);
    for (let i = 0; i < m; i++) {
      const s = this.series[i]!;
      const end = lowerBoundDate(keyDate, seriesKeyStart[s]!, seriesKeyStart[s + 1]!, to + 1);
      let startDate = from;
      // The cursor's own key may have versions left: it is merged again, and its served rows skipped.
      if (resume !== null) startDate = Math.max(startDate, s >= resume.lastSeries ? resume.lastDate : resume.lastDate + 1);
      merge.add(s, lowerBoundDate(keyDate, seriesKeyStart[s]!, end, startDate), end);
    }

    const { rows } = this;
    const vf = this.visibleFrom.values;
    const vt = this.visibleTo.values;
    const vtValid = this.visibleTo.validity!;
    let count = 0;
    let lastKey = -1;
    while (!merge.empty && count < q.limit) {
      const k = merge.peek();
      merge.pop();
      if (keyThr[k]! > t) continue;
      let n = this.listKey(table, k, t);
      if (q.firstOnly) n = Math.min(n, 1);
      const afterRow = resume !== null && keyDate[k] === resume.lastDate && keySeries[k] === resume.lastSeries ? resume.lastExtra : -1;
      // listKey wrote newest first; the answer is oldest first, and the first release is the oldest.
      for (let x = this.kLen - 1; x >= this.kLen - n && count < q.limit; x--) {
        const r = this.kRow[x]!;
        if (r <= afterRow) continue;
        rows[count] = r;
        vf[count] = this.kFrom[x]!;
        const until = this.kTo[x]!;
        const open = until === Infinity || until > t;
        vt[count] = open ? 0 : until;
        vtValid[count] = open ? 0 : 1;
        count++;
        lastKey = k;
      }
    }

    const offset = resume?.offset ?? 0;
    let next: Page['next'] = null;
    if (count > 0 && offset + count < total)
      next = { lastDate: keyDate[lastKey]!, lastSeries: keySeries[lastKey]!, lastExtra: rows[count - 1]!, offset: offset + count };
    return { rows, count, total, next, visibleFrom: this.visibleFrom, visibleTo: this.visibleTo };
  }

  /**
   * Key k's listed versions visible at t (visible_from <= t), newest first, into kRow/kFrom/kTo[0, kLen);
   * returns kLen. The oldest (the first release) is at kLen - 1.
   */
  private listKey(table: Table, k: number, t: number): number {
    const thr = table.rowThr;
    const a = table.keyRowStart[k]!;
    const end = table.keyRowStart[k + 1]!;
    if (this.kRow.length < end - a) {
      const n = Math.max(end - a, this.kRow.length * 2);
      this.kRow = new Int32Array(n);
      this.kFrom = new Float64Array(n);
      this.kTo = new Float64Array(n);
    }
    let n = 0;
    let later = Infinity; // least threshold of the versions after r
    for (let r = end - 1; r >= a; r--) {
      const x = thr[r]!;
      if (x < later) {
        if (x <= t) {
          this.kRow[n] = r;
          this.kFrom[n] = x;
          this.kTo[n] = later;
          n++;
        }
        later = x;
      }
    }
    this.kLen = n;
    return n;
  }
}

function vintageColumn(name: string, length: number, nullable: boolean): TimestampColumn {
  return { kind: 'timestamp', name, unit: 'us', validity: nullable ? new Uint8Array(length) : null, values: new Float64Array(length) };
}
