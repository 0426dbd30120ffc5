import { orderBySeriesAndDate, inversePermutation } from '../store/row-order.js';
import { scatterF64 } from '../store/scatter.js';
import { compareUtf8 } from '../store/string-dictionary.js';
import { orderVersions } from '../store/version-order.js';
import { columnOf, instantsOf, type VersionTable } from './version-table.js';

/** Some rows of a table (all of them when `rows` is null), in that order. */
export interface Segment {
  readonly table: VersionTable;
  readonly rows: Int32Array | null;
}

/**
 * The order a server keeps rows in (store/table.ts): series by key values (UTF-8 bytes),
 * date, str_observed_at, str_ingested_at, then position. A snapshot written in it loads
 * without a sort or a reorder of its columns. The order is stable, so rows that tie on
 * every term (position decides PIT-4) keep their relative order: answers do not change.
 *
 * Rows are those of the segments one after the other; `ingested` replaces str_ingested_at
 * (µs) by that index. Returns the rows by index in that order, or null when they already are.
 */
export function physicalOrder(segments: readonly Segment[], seriesKey: readonly string[], ingested: ReadonlyMap<number, number>): Int32Array | null {
  const n = segments.reduce((sum, s) => sum + (s.rows?.length ?? s.table.rows), 0);
  const date = new Int32Array(n);
  const obs = new Float64Array(n);
  const ing = new Float64Array(n);
  const keyCodes = seriesKey.map(() => new Int32Array(n));
  const keyValues = seriesKey.map(() => new Map<string, number>());
  let o = 0;
  for (const seg of segments) {
    const days = columnOf(seg.table, 'date');
    if (days.kind !== 'date32') throw new Error('column "date" must be Date32');
    const segObs = instantsOf(seg.table, 'str_observed_at');
    const segIng = instantsOf(seg.table, 'str_ingested_at');
    const keys = seriesKey.map((name) => columnOf(seg.table, name));
    const count = seg.rows?.length ?? seg.table.rows;
    for (let i = 0; i < count; i++, o++) {
      const row = seg.rows === null ? i : seg.rows[i]!;
      date[o] = days.values[row]!;
      obs[o] = segObs[row]!;
      ing[o] = ingested.get(o) ?? segIng[row]!;
      for (let j = 0; j < keys.length; j++) {
        const c = keys[j]!;
        if (c.kind !== 'string') throw new Error(`series-key column "${c.name}" must be a string column`);
        const s = c.strings[c.codes[row]!]!;
        const codes = keyValues[j]!;
        let code = codes.get(s);
        if (code === undefined) codes.set(s, (code = codes.size));
        keyCodes[j]![o] = code;
      }
    }
  }
  const keys = keyValues.map((values, j) => ({ codes: keyCodes[j]!, cardinality: values.size, rank: utf8Ranks([...values.keys()]) }));

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
  return orderVersions(order.seriesStart, datePlaced, placed(obs), placed(ing), { perm: order.perm, rank }).perm;
}

/** rank[code] of each distinct value, by UTF-8 byte order. */
function utf8Ranks(values: readonly string[]): Int32Array {
  const order = values.map((_, i) => i).sort((a, b) => compareUtf8(values[a]!, values[b]!));
  const rank = new Int32Array(values.length);
  order.forEach((code, r) => (rank[code] = r));
  return rank;
}
