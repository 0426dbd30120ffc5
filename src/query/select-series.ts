import type { Table } from '../store/table.js';
import type { FilterClause } from './query.js';

/**
 * Series matching every filter (exact, case-sensitive; a list means any of its values),
 * ascending (= output order). Writes into `out` and returns the count. Cost: one pass over
 * the series, never over rows.
 */
export function selectSeries(table: Table, filters: readonly FilterClause[], out: Int32Array): number {
  const s = table.seriesCount;
  if (filters.length === 0) {
    for (let i = 0; i < s; i++) out[i] = i;
    return s;
  }
  // Per filter: the accepted codes as a bitmap over the column's dictionary. A value the
  // dictionary lacks matches nothing.
  const checks = filters.map((f) => {
    const j = table.seriesKey.indexOf(f.column);
    const col = table.seriesColumns[j]!;
    const accepted = new Uint8Array(col.dict.values.length);
    for (const v of f.values) {
      const code = col.dict.codeOf.get(v);
      if (code !== undefined) accepted[code] = 1;
    }
    return { codes: col.codes, accepted };
  });
  let count = 0;
  const keyRowStart = table.keyRowStart;
  const seriesKeyStart = table.seriesKeyStart;
  for (let i = 0; i < s; i++) {
    // Every row of a series holds the same key values: read them from its first row.
    const row = keyRowStart[seriesKeyStart[i]!]!;
    let ok = true;
    for (const c of checks) {
      if (c.accepted[c.codes[row]!] !== 1) {
        ok = false;
        break;
      }
    }
    if (ok) out[count++] = i;
  }
  return count;
}
