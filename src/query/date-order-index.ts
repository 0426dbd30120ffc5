import { BLOCK, buildDateOrder, type DateOrder } from '../store/date-order.js';
import type { Table } from '../store/table.js';

/**
 * A generation's keys in (date, series) order (store/date-order.ts), built the first time
 * an answer over every series needs it and owned by the Generation: it goes with the
 * generation, and nothing else holds it. Per thread, like the series value index: each
 * serving thread's Generation builds its own (4 bytes a key, and 16 per block of keys).
 */
export class DateOrderIndex {
  private built: DateOrder | null = null;

  constructor(private readonly table: Table) {}

  get(): DateOrder {
    return (this.built ??= buildDateOrder(this.table.keyDate, this.table.keyThr));
  }

  /** bytes held once built (0 before): what the first bulk answer added to its generation */
  get byteSize(): number {
    const o = this.built;
    return o === null ? 0 : o.keys.byteLength + o.dayStart.byteLength + o.blockMin.byteLength + o.blockMax.byteLength;
  }

  /**
   * bytes it holds once built, without building it: what a generation may add on each
   * serving thread. A series' keys are in date order, so its first and last key bound the span of days.
   */
  static plannedBytes(table: Pick<Table, 'keyCount' | 'keyDate' | 'seriesCount' | 'seriesKeyStart'>): number {
    const { keyCount: n, keyDate, seriesCount, seriesKeyStart } = table;
    let min = n === 0 ? 0 : Infinity;
    let max = n === 0 ? 0 : -Infinity;
    for (let s = 0; s < seriesCount; s++) {
      const a = seriesKeyStart[s]!;
      const b = seriesKeyStart[s + 1]!;
      if (a >= b) continue;
      if (keyDate[a]! < min) min = keyDate[a]!;
      if (keyDate[b - 1]! > max) max = keyDate[b - 1]!;
    }
    const days = max - min + 1;
    return n * 4 + (days + 1) * 4 + Math.ceil(n / BLOCK) * 16;
  }
}
