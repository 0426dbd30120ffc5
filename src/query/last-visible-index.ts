import { buildSuffixMin } from '../store/last-visible.js';
import type { Table } from '../store/table.js';

/**
 * A generation's per-series suffix minimum of key thresholds (store/last-visible.ts), built
 * the first time a `latest` answer over many series finds a series whose last key is not
 * visible under its `as_of`, and owned by the Generation: it goes with the generation. Per
 * serving thread, like the date order (8 bytes a key).
 */
export class LastVisibleIndex {
  private built: Float64Array | null = null;

  constructor(private readonly table: Table) {}

  get(): Float64Array {
    return (this.built ??= buildSuffixMin(this.table.keyThr, this.table.seriesKeyStart, this.table.seriesCount));
  }

  /** bytes held once built (0 before) */
  get byteSize(): number {
    return this.built?.byteLength ?? 0;
  }

  /** bytes it holds once built: what a generation may add on each serving thread */
  static plannedBytes(table: Pick<Table, 'keyCount'>): number {
    return table.keyCount * Float64Array.BYTES_PER_ELEMENT;
  }
}
