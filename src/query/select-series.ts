import type { StringColumn } from '../store/column.js';
import type { Table } from '../store/table.js';
import type { FilterClause } from './query.js';
import type { SeriesValueIndex } from './series-value-index.js';

/**
 * Series matching every filter (exact, case-sensitive; a list means any of its values),
 * ascending (= output order). Writes into `out` and returns the count. Without filters it
 * lists every series; with filters it starts from the first clause's value index (owned by
 * the generation, built on first use), so the cost follows the series that match, not the
 * dataset.
 */
export function selectSeries(table: Table, index: SeriesValueIndex, filters: readonly FilterClause[], out: Int32Array): number {
  const s = table.seriesCount;
  if (filters.length === 0) {
    for (let i = 0; i < s; i++) out[i] = i;
    return s;
  }
  const colOf = (f: FilterClause): StringColumn => table.seriesColumns[table.seriesKey.indexOf(f.column)]!;
  const first = colOf(filters[0]!);
  const idx = index.of(first);
  let count = 0;
  for (const v of filters[0]!.values) {
    const code = first.dict.codeOf.get(v);
    if (code === undefined) continue;
    for (let j = idx.start[code]!; j < idx.start[code + 1]!; j++) out[count++] = idx.series[j]!;
  }
  // Several values: their lists are each ascending; one sort restores series order.
  if (filters[0]!.values.length > 1) out.subarray(0, count).sort();
  if (filters.length === 1) return count;

  const rest = filters.slice(1).map((f) => {
    const col = colOf(f);
    const accepted = new Set<number>();
    for (const v of f.values) {
      const code = col.dict.codeOf.get(v);
      if (code !== undefined) accepted.add(code);
    }
    return { codes: col.codes, accepted };
  });
  let kept = 0;
  for (let i = 0; i < count; i++) {
    const series = out[i]!;
    const row = table.keyRowStart[table.seriesKeyStart[series]!]!;
    if (rest.every((c) => c.accepted.has(c.codes[row]!))) out[kept++] = series;
  }
  return kept;
}
