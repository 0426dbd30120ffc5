/**
 * Splits a snapshot into the parts of contract 14: every series whole in one part, parts in
 * series order (the UTF-8 bytes of the series-key values), each part's rows in their
 * snapshot order. Also the ways of breaking that rule, for the refusal tests.
 */
import type { ColumnSpec, SnapshotSpec } from '../../src/snapshot/arrow-writer.js';
import { compareUtf8 } from '../../src/store/string-dictionary.js';
import type { Rng } from './random-snapshot.js';

/** The series of each row, numbered in series order. */
export function seriesOfRows(spec: SnapshotSpec): { series: Int32Array; count: number } {
  const keyCols = spec.seriesKey.map((k) => spec.columns.find((c) => c.name === k)!.values as ArrayLike<string>);
  const rows = spec.columns[0]!.values.length;
  const tuples = new Map<string, string[]>();
  const tupleOf: string[] = [];
  for (let r = 0; r < rows; r++) {
    const t = keyCols.map((c) => c[r]!);
    const id = JSON.stringify(t);
    tupleOf.push(id);
    tuples.set(id, t);
  }
  const order = [...tuples.entries()].sort(([, a], [, b]) => {
    for (let i = 0; i < a.length; i++) {
      const c = compareUtf8(a[i]!, b[i]!);
      if (c !== 0) return c;
    }
    return 0;
  });
  const rank = new Map(order.map(([id], i) => [id, i]));
  return { series: Int32Array.from(tupleOf, (id) => rank.get(id)!), count: order.length };
}

/** The spec with only these rows (in this order). */
export function pickRows(spec: SnapshotSpec, rows: readonly number[]): SnapshotSpec {
  const columns = spec.columns.map((c) => ({ ...c, values: rows.map((r) => c.values[r]) }) as ColumnSpec);
  return { ...spec, columns };
}

/** Rows of each part when the series are cut before each of `cuts` (series numbers, ascending). */
export function rowsByCuts(series: Int32Array, cuts: readonly number[]): number[][] {
  const parts: number[][] = Array.from({ length: cuts.length + 1 }, () => []);
  for (let r = 0; r < series.length; r++) {
    let p = 0;
    while (p < cuts.length && series[r]! >= cuts[p]!) p++;
    parts[p]!.push(r);
  }
  return parts;
}

/** Random cut points: 2..maxParts parts of at least one series each (fewer when there are fewer series). */
export function randomCuts(rng: Rng, seriesCount: number, maxParts: number): number[] {
  const want = Math.min(seriesCount, rng.int(2, maxParts)) - 1;
  const cuts = new Set<number>();
  while (cuts.size < want) cuts.add(rng.int(1, seriesCount - 1));
  return [...cuts].sort((a, b) => a - b);
}

/** The spec split into parts at `cuts`. */
export function splitSpec(spec: SnapshotSpec, cuts: readonly number[]): SnapshotSpec[] {
  const { series } = seriesOfRows(spec);
  return rowsByCuts(series, cuts).map((rows) => pickRows(spec, rows));
}
