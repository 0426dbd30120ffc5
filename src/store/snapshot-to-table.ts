import { createHash } from 'node:crypto';
import { OpsError } from '../ops-errors.js';
import type { ArrowColumn } from './arrow-column.js';
import { buildTableFromArrow } from './build-table.js';
import { readArrowSnapshot, type ArrowSnapshot } from './decode-arrow.js';
import type { PartLayout } from './part-order.js';
import type { Table } from './table.js';

const HASH_SLICE = 256 * 1024 * 1024;

/** What one object of a generation must hash to and hold (its manifest's word). */
export interface PartExpectation {
  /** for messages */
  readonly object: string;
  readonly sha256: string;
  readonly rows: number;
}

/** What a generation's objects must satisfy besides contract 6's column table. */
export interface SnapshotExpectations {
  /** in series order (contract 14); a `/1` manifest's object is its one part */
  readonly parts: readonly PartExpectation[];
  /** columns that must be in the series key (the product's filters, contract 3) */
  readonly filterColumns: readonly string[];
  /** end of the product's vintage-floor day, µs */
  readonly floorUs: number;
}

/** The sha256 of some bytes, hashed in slices: a single update over several GiB is not something to rely on. */
export function sha256Hex(bytes: Uint8Array): string {
  const hash = createHash('sha256');
  for (let at = 0; at < bytes.byteLength; at += HASH_SLICE) hash.update(bytes.subarray(at, Math.min(bytes.byteLength, at + HASH_SLICE)));
  return hash.digest('hex');
}

/**
 * One part's bytes -> its columns, checked: sha256, contract 6's column table, row count.
 * Throws an OpsError saying why the part (so the whole generation) is refused.
 */
export function readPart(bytes: Uint8Array, want: PartExpectation): ArrowSnapshot {
  const digest = sha256Hex(bytes);
  if (digest !== want.sha256) {
    throw new OpsError('checksum_mismatch', `sha256 mismatch for ${want.object}: manifest says ${want.sha256}, object is ${digest}`);
  }
  let snap: ArrowSnapshot;
  try {
    snap = readArrowSnapshot(bytes);
  } catch (e) {
    throw new OpsError('snapshot_invalid', `${want.object}: ${(e as Error).message}`);
  }
  if (snap.rows !== want.rows) throw new OpsError('row_count_mismatch', `manifest says ${want.rows} rows, ${want.object} holds ${snap.rows}`);
  return snap;
}

/**
 * The parts of a generation, checked one by one, as one snapshot: the same schema in every
 * part (contract 14), each column's record batches one after the other.
 */
export function joinParts(snaps: readonly ArrowSnapshot[], names: readonly string[]): { snap: ArrowSnapshot; layout: PartLayout } {
  const first = snaps[0]!;
  const starts = new Int32Array(snaps.length + 1);
  let rows = 0;
  for (const [p, s] of snaps.entries()) {
    if (s.schemaText !== first.schemaText) {
      throw new OpsError('snapshot_invalid', `${names[p]!} has another schema than ${names[0]!}: every part of a generation has the same schema`);
    }
    rows += s.rows;
    if (rows > 0x7fff_ffff) throw new OpsError('snapshot_invalid', 'a generation holds more than 2^31 - 1 rows');
    starts[p + 1] = rows;
  }
  const layout = { starts, names };
  if (snaps.length === 1) return { snap: first, layout };
  const columns = first.columns.map((c, i): ArrowColumn => {
    const all = snaps.map((s) => s.columns[i]!);
    return { ...c, chunks: all.flatMap((x) => x.chunks), rows, hasNulls: all.some((x) => x.hasNulls) };
  });
  return { snap: { rows, columns, seriesKey: first.seriesKey, fields: first.fields, schemaText: first.schemaText }, layout };
}

/**
 * A generation's objects -> a serving table, or an Error saying why the generation is
 * refused. Pure CPU work: runs on a worker thread when serving, inline in the CLI.
 */
export function snapshotToTable(parts: readonly Uint8Array[], want: SnapshotExpectations): Table {
  if (parts.length !== want.parts.length) throw new Error(`snapshotToTable: ${parts.length} objects for ${want.parts.length} parts`);
  const snaps = parts.map((bytes, p) => readPart(bytes, want.parts[p]!));
  const { snap, layout } = joinParts(
    snaps,
    want.parts.map((p) => p.object),
  );
  for (const f of want.filterColumns) {
    if (!snap.seriesKey.includes(f)) {
      throw new OpsError('filter_column_missing', `filter column "${f}" is not in the series key ${JSON.stringify(snap.seriesKey)}`);
    }
  }
  return buildTableFromArrow(snap, want.floorUs, layout);
}
