import type { Collected } from './series-rows.js';
import type { VersionTable } from './version-table.js';

/** str_ingested_at rewritten by a --rebuild: collected rows flagged 1 get `us`. */
export interface Restamp {
  readonly rows: Uint8Array;
  readonly us: number;
}

/** Which columns order the rows of one series: `date` alone (keys), or date then the two stamps (the server's order). */
export interface OrderColumns {
  readonly date: number;
  readonly stamps: { readonly observed: number; readonly ingested: number; readonly restamp: Restamp | null } | null;
}

/**
 * Sorts each series of `c.order` by date, then (with `stamps`) str_observed_at and
 * str_ingested_at, then position: with stamps, the order a server keeps rows in
 * (store/table.ts), so a part written in it loads without a sort; a rows' order that ties on
 * every term keeps positions (PIT-4). A series already in order (the usual input, day by day)
 * is checked in one pass and not moved. Scratch is one series' rows.
 */
export function orderWithinSeries(c: Collected, chunks: readonly VersionTable[], by: OrderColumns): void {
  const { order, seriesStart, chunkOf, rowOf } = c;
  const dates = chunks.map((ch) => (ch.columns[by.date] as { values: Int32Array }).values);
  const stamps = by.stamps;
  const obsOf = stamps === null ? null : chunks.map((ch) => (ch.columns[stamps.observed] as { values: Float64Array }).values);
  const ingOf = stamps === null ? null : chunks.map((ch) => (ch.columns[stamps.ingested] as { values: Float64Array }).values);
  const restamp = stamps?.restamp ?? null;
  let cap = 0;
  let d = new Float64Array(0);
  let o = new Float64Array(0);
  let g = new Float64Array(0);
  let idx = new Int32Array(0);
  let tmp = new Int32Array(0);
  for (let s = 0; s + 1 < seriesStart.length; s++) {
    const a = seriesStart[s]!;
    const n = seriesStart[s + 1]! - a;
    if (n <= 1) continue;
    if (n > cap) {
      cap = Math.max(n, cap * 2);
      d = new Float64Array(cap);
      o = new Float64Array(cap);
      g = new Float64Array(cap);
      idx = new Int32Array(cap);
      tmp = new Int32Array(cap);
    }
    for (let t = 0; t < n; t++) {
      const j = order[a + t]!;
      const k = chunkOf[j]!;
      const row = rowOf[j]!;
      d[t] = dates[k]![row]!;
      if (obsOf !== null) {
        o[t] = obsOf[k]![row]!;
        g[t] = restamp !== null && restamp.rows[j] === 1 ? restamp.us : ingOf![k]![row]!;
      }
    }
    let sorted = true;
    for (let t = 1; t < n && sorted; t++) {
      const dd = d[t]! - d[t - 1]!;
      if (dd < 0) sorted = false;
      else if (dd === 0 && obsOf !== null) {
        const od = o[t]! - o[t - 1]!;
        if (od < 0 || (od === 0 && g[t]! < g[t - 1]!)) sorted = false;
      }
    }
    if (sorted) continue;
    const view = idx.subarray(0, n);
    for (let t = 0; t < n; t++) view[t] = t;
    // Positions rise with t inside a series (SeriesRows.collect), so t breaks the last tie.
    if (obsOf === null) view.sort((x, y) => d[x]! - d[y]! || x - y);
    else view.sort((x, y) => d[x]! - d[y]! || o[x]! - o[y]! || g[x]! - g[y]! || x - y);
    for (let t = 0; t < n; t++) tmp[t] = order[a + view[t]!]!;
    order.set(tmp.subarray(0, n), a);
  }
}
