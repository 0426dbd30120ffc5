import { DateOrderIndex } from '../query/date-order-index.js';
import { LastVisibleIndex } from '../query/last-visible-index.js';
import type { Generation } from './generation.js';

/** What one generation holds in the process: its table, and the indexes of bulk answers. */
export interface GenerationBytes {
  /** the table's arrays, once (shared memory, every serving thread reads the same) */
  readonly table: number;
  /**
   * the indexes a serving thread builds of it on first use (the (date, series) order and
   * the per-series suffix minimum: docs/decisions.md#date-order), counted as built on
   * every serving thread, whether they are yet or not
   */
  readonly indexes: number;
  readonly total: number;
}

/**
 * The bytes a generation counts for: what the retention budget (--retain-memory) holds it
 * to, and what /admin/status and /metrics report. The bulk indexes are built lazily and per
 * serving thread, and the budget is kept on the loading thread, which does not see them
 * built: so they are counted up front at what they will take once every thread has built
 * them (the most they can take), and memory stays within the budget whichever threads build them.
 */
export class GenerationMemory {
  constructor(
    /** threads that answer requests, each of which may build its own indexes */
    readonly servingThreads: number,
  ) {}

  of(g: Generation): GenerationBytes {
    const table = g.table.byteSize;
    const indexes = this.servingThreads * (DateOrderIndex.plannedBytes(g.table) + LastVisibleIndex.plannedBytes(g.table));
    return { table, indexes, total: table + indexes };
  }
}
