import type { OutputColumn } from '../format/page-view.js';
import { DateOrderIndex } from '../query/date-order-index.js';
import { LastVisibleIndex } from '../query/last-visible-index.js';
import { SeriesValueIndex } from '../query/series-value-index.js';
import type { Manifest } from '../snapshot/manifest.js';
import type { Table } from '../store/table.js';

/**
 * One loaded snapshot of one dataset, immutable once built: requests hold it, refresh
 * replaces it. How its rows are written is not here: format writers find their compiled
 * row writers per thread from the table (format/json/json-layouts.ts).
 */
export interface Generation {
  readonly number: number;
  /**
   * Unique in the process over every dataset and every load (nextGenerationUid), the same
   * on every serving thread: what memory shared between threads (the row arena) tags a
   * generation's text with. `number` is the source's and may come back with other data.
   */
  readonly uid: number;
  readonly manifest: Manifest;
  readonly table: Table;
  /** the series of each value of a series-key column, built on first use (select-series.ts) */
  readonly seriesIndex: SeriesValueIndex;
  /** the keys in (date, series) order, built on first use by an answer over many series (page-resolver.ts) */
  readonly dateOrder: DateOrderIndex;
  /** per key, the least threshold of it and its series' later keys, built on first use by a latest answer over many series (page-resolver.ts) */
  readonly lastVisible: LastVisibleIndex;
  /**
   * Every stored column at its row, in schema order: the default output layout. One array
   * per generation, so a writer finds its compiled layout by identity.
   */
  readonly outputColumns: readonly OutputColumn[];
  /** ms since epoch, from the injected clock */
  readonly loadedAtMs: number;
  /** ms spent fetching, checking, decoding and indexing */
  readonly loadMs: number;
}

/** What a generation is made of: the loader builds it, a serving thread receives it. */
export interface GenerationParts {
  readonly number: number;
  /** from nextGenerationUid on the loading thread; serving threads receive it */
  readonly uid: number;
  readonly manifest: Manifest;
  readonly table: Table;
  readonly loadedAtMs: number;
  readonly loadMs: number;
}

/** The last uid handed out: only the loading thread hands them out, serving threads are told. */
let lastUid = 0;

/** A fresh Generation.uid (loading thread only). */
export function nextGenerationUid(): number {
  return ++lastUid;
}

/**
 * The one place a Generation is made, on the loading thread and on every serving thread
 * alike, so both derive the same per-generation state from the same table.
 */
export function makeGeneration(p: GenerationParts): Generation {
  return {
    number: p.number,
    uid: p.uid,
    manifest: p.manifest,
    table: p.table,
    seriesIndex: new SeriesValueIndex(p.table),
    dateOrder: new DateOrderIndex(p.table),
    lastVisible: new LastVisibleIndex(p.table),
    outputColumns: p.table.columns.map((column) => ({ column, at: 'row' })),
    loadedAtMs: p.loadedAtMs,
    loadMs: p.loadMs,
  };
}
