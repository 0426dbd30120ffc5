import { OpsError } from '../ops-errors.js';

/** Where each part of a generation lies among the rows of all parts, one after the other. */
export interface PartLayout {
  /** part p holds snapshot rows [starts[p], starts[p+1]) */
  readonly starts: Int32Array;
  /** the parts' object names, for messages */
  readonly names: readonly string[];
}

/**
 * Contract 14: all rows of a series lie in one part, and the parts come in series order.
 * Checked on the order the table is built in (series by rank, that is by the UTF-8 bytes of
 * their key values): walking the series in that order, each series' rows must all come from
 * one part, and that part never goes back. `perm[i]` is the snapshot row at physical
 * position i (null: the rows are already in that order). `describe(row)` names a series.
 */
export function checkPartOrder(
  layout: PartLayout,
  perm: Int32Array | null,
  seriesStart: Int32Array,
  seriesCount: number,
  describe: (row: number) => string,
): void {
  if (layout.names.length <= 1) return;
  const rowAt = (i: number): number => (perm === null ? i : perm[i]!);
  let last = 0;
  for (let s = 0; s < seriesCount; s++) {
    const from = seriesStart[s]!;
    const to = seriesStart[s + 1]!;
    const first = rowAt(from);
    const p = partOf(layout.starts, first);
    if (p < last) {
      throw new OpsError(
        'snapshot_invalid',
        `parts out of series order: series ${describe(first)} is in ${layout.names[p]!}, after a later series in ${layout.names[last]!}`,
      );
    }
    last = p;
    const lo = layout.starts[p]!;
    const hi = layout.starts[p + 1]!;
    for (let i = from + 1; i < to; i++) {
      const j = rowAt(i);
      if (j < lo || j >= hi) {
        const q = partOf(layout.starts, j);
        throw new OpsError(
          'snapshot_invalid',
          `series ${describe(first)} lies in two parts, ${layout.names[Math.min(p, q)]!} and ${layout.names[Math.max(p, q)]!}: all rows of a series must be in one part`,
        );
      }
    }
  }
}

/** The part holding snapshot row j: the last p with starts[p] <= j (empty parts skipped). */
function partOf(starts: Int32Array, j: number): number {
  let lo = 0;
  let hi = starts.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= j) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
