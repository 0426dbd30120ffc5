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
  const first = colOf(table, filters[0]!);
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

  // Long value lists are checked through a Set of their codes, made once here (only then).
  const sets = longClauseAfterFirst(filters) ? filters.map((f) => codeSet(colOf(table, f), f.values)) : null;
  let kept = 0;
  for (let i = 0; i < count; i++) {
    const series = out[i]!;
    const row = table.keyRowStart[table.seriesKeyStart[series]!]!;
    let ok = true;
    for (let c = 1; c < filters.length && ok; c++) {
      const col = colOf(table, filters[c]!);
      const values = filters[c]!.values;
      ok = values.length > SCAN_MAX_VALUES ? sets![c]!.has(col.codes[row]!) : accepts(col, values, row);
    }
    if (ok) out[kept++] = series;
  }
  return kept;
}

/** The series-key column a clause filters (a function, not a closure over the table: one object less per request). */
function colOf(table: Table, f: FilterClause): StringColumn {
  return table.seriesColumns[table.seriesKey.indexOf(f.column)]!;
}

function longClauseAfterFirst(filters: readonly FilterClause[]): boolean {
  for (let c = 1; c < filters.length; c++) if (filters[c]!.values.length > SCAN_MAX_VALUES) return true;
  return false;
}

/** Up to this many values, a clause is checked by comparing strings; above, through a Set of codes. */
const SCAN_MAX_VALUES = 8;

/**
 * Whether the series at `row` has one of `values` in `col` (null never matches). A loop's
 * request names one value per clause: comparing it with the row's dictionary string costs
 * less than building a Set per request (near-zero allocation per request: docs/decisions.md#allocation).
 */
function accepts(col: StringColumn, values: readonly string[], row: number): boolean {
  const v = col.dict.values[col.codes[row]!];
  return v !== undefined && values.includes(v);
}

/** The codes of `values` in `col` (values absent from the dictionary left out). */
function codeSet(col: StringColumn, values: readonly string[]): Set<number> {
  const set = new Set<number>();
  for (const v of values) {
    const code = col.dict.codeOf.get(v);
    if (code !== undefined) set.add(code);
  }
  return set;
}
