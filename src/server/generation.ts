import { RowRenderer } from '../render/row-renderer.js';
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

/** What a generation is made of: the loader builds it, a serving thread receives it. */
export interface GenerationParts {
  readonly number: number;
  readonly manifest: Manifest;
  readonly table: Table;
  readonly loadedAtMs: number;
  readonly loadMs: number;
}

/**
 * The one place a Generation is made, on the loading thread and on every serving thread
 * alike, so both derive the same per-generation state from the same table.
 */
export function makeGeneration(p: GenerationParts): Generation {
  return { number: p.number, manifest: p.manifest, table: p.table, renderer: new RowRenderer(p.table), loadedAtMs: p.loadedAtMs, loadMs: p.loadMs };
}
