import { orderBySeriesAndDate, inversePermutation, type KeyCodes } from '../store/row-order.js';
import { scatterF64 } from '../store/scatter.js';
import { orderVersions } from '../store/version-order.js';
import { segmentInstants, segmentKeys, type Segment } from './segment-columns.js';

export type { Segment } from './segment-columns.js';

/** str_ingested_at rewritten by a --rebuild: rows (by index in the segments) flagged 1 get `us`. */
export interface IngestedRewrite {
  readonly rows: Uint8Array;
  readonly us: number;
}

/**
 * The order a server keeps rows in (store/table.ts): series by key values (UTF-8 bytes),
 * date, str_observed_at, str_ingested_at, then position. A snapshot written in it loads
 * without a sort or a reorder of its columns. The order is stable, so rows that tie on
 * every term (position decides PIT-4) keep their relative order: answers do not change.
 *
 * Rows are those of the segments one after the other; `ingested` replaces str_ingested_at
 * of the rows it flags. Returns the rows by index in that order (null when they already
 * are), and the series-key codes by index, which say where a series starts.
 */
export function physicalOrder(
  segments: readonly Segment[],
  seriesKey: readonly string[],
  ingested: IngestedRewrite | null,
): { perm: Int32Array | null; keys: KeyCodes[] } {
  const { date, keys } = segmentKeys(segments, seriesKey);
  const n = date.length;
  const obs = segmentInstants(segments, 'str_observed_at');
  const ing = segmentInstants(segments, 'str_ingested_at');
  if (ingested !== null) for (let i = 0; i < ingested.rows.length; i++) if (ingested.rows[i] === 1) ing[i] = ingested.us;

  const order = orderBySeriesAndDate(n, date, keys);
  const rank = order.perm === null ? null : inversePermutation(order.perm);
  const placed = (a: Float64Array): Float64Array => {
    if (rank === null) return a;
    const out = new Float64Array(n);
    scatterF64(a, out, rank, 0);
    return out;
  };
  let datePlaced = date;
  if (order.perm !== null) {
    datePlaced = new Int32Array(n);
    for (let i = 0; i < n; i++) datePlaced[i] = date[order.perm[i]!]!;
  }
  return { perm: orderVersions(order.seriesStart, datePlaced, placed(obs), placed(ing), { perm: order.perm, rank }).perm, keys };
}
