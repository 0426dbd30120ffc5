import { createHash } from 'node:crypto';
import { OpsError } from '../ops-errors.js';
import { buildTableFromArrow } from './build-table.js';
import { readArrowSnapshot } from './decode-arrow.js';
import type { Table } from './table.js';

const HASH_SLICE = 256 * 1024 * 1024;

/** What a snapshot object must satisfy besides contract 6's column table. */
export interface SnapshotExpectations {
  /** for messages */
  readonly object: string;
  readonly sha256: string;
  readonly rows: number;
  /** columns that must be in the series key (the product's filters, contract 3) */
  readonly filterColumns: readonly string[];
  /** end of the product's vintage-floor day, µs */
  readonly floorUs: number;
}

/**
 * Snapshot bytes -> a serving table, or an Error saying why the snapshot is refused. Pure
 * CPU work: runs on a worker thread when serving, inline in the CLI.
 */
export function snapshotToTable(bytes: Uint8Array, want: SnapshotExpectations): Table {
  // Hashed in slices: a single update over several GiB is not something to rely on.
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.byteLength; at += HASH_SLICE) hash.update(bytes.subarray(at, Math.min(bytes.byteLength, at + HASH_SLICE)));
  const digest = hash.digest('hex');
  if (digest !== want.sha256) {
    throw new OpsError('checksum_mismatch', `sha256 mismatch for ${want.object}: manifest says ${want.sha256}, object is ${digest}`);
  }
  const decoded = readArrowSnapshot(bytes);
  if (decoded.rows !== want.rows) throw new OpsError('row_count_mismatch', `manifest says ${want.rows} rows, ${want.object} holds ${decoded.rows}`);
  for (const f of want.filterColumns) {
    if (!decoded.seriesKey.includes(f)) {
      throw new OpsError('filter_column_missing', `filter column "${f}" is not in the series key ${JSON.stringify(decoded.seriesKey)}`);
    }
  }
  return buildTableFromArrow(decoded, want.floorUs);
}
