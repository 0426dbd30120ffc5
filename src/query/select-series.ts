import type { StringColumn } from '../store/column.js';
import type { Table } from '../store/table.js';
import type { FilterClause } from './query.js';

/**
 * Per series-key column of a generation: the series holding each value, ascending.
 * Series of code c are series[start[c] .. start[c+1]). Built on first use, once per
 * generation (O(series)), so a filtered request touches only the series it names.
 */
interface ValueIndex {
  readonly start: Int32Array;
  readonly series: Int32Array;
}

const indexes = new WeakMap<StringColumn, ValueIndex>();

function valueIndex(table: Table, col: StringColumn): ValueIndex {
  let idx = indexes.get(col);
  if (idx !== undefined) return idx;
  const n = col.dict.values.length;
  const s = table.seriesCount;
  const start = new Int32Array(n + 1);
  const firstRow = (i: number): number => table.keyRowStart[table.seriesKeyStart[i]!]!;
  for (let i = 0; i < s; i++) start[col.codes[firstRow(i)]! + 1]!++;
  for (let c = 0; c < n; c++) start[c + 1]! += start[c]!;
  const fill = start.slice(0, n);
  const series = new Int32Array(s);
  for (let i = 0; i < s; i++) series[fill[col.codes[firstRow(i)]!]!++] = i;
  idx = { start, series };
  indexes.set(col, idx);
  return idx;
}

/**
 * Series matching every filter (exact, case-sensitive; a list means any of its values),
 * ascending (= output order). Writes into `out` and returns the count. Without filters it
 * lists every series; with filters it starts from the first clause's value index, so the
 * cost follows the series that match, not the dataset.
 */
export function selectSeries(table: Table, filters: readonly FilterClause[], out: Int32Array): number {
  const s = table.seriesCount;
  if (filters.length === 0) {
    for (let i = 0; i < s; i++) out[i] = i;
    return s;
  }
  const colOf = (f: FilterClause): StringColumn => table.seriesColumns[table.seriesKey.indexOf(f.column)]!;
  const first = colOf(filters[0]!);
  const idx = valueIndex(table, first);
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
