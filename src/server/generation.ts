import type { RowRenderer } from '../render/row-renderer.js';
import type { Manifest } from '../snapshot/manifest.js';
import type { Table } from '../store/table.js';

/** One loaded snapshot of one dataset, immutable once built: requests hold it, refresh replaces it. */
export interface Generation {
  readonly number: number;
  readonly manifest: Manifest;
  readonly table: Table;
  readonly renderer: RowRenderer;
  /** ms since epoch, from the injected clock */
  readonly loadedAtMs: number;
  /** ms spent fetching, checking, decoding and indexing */
  readonly loadMs: number;
}
