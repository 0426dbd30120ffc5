import { createHash } from 'node:crypto';
import { OpsError } from '../ops-errors.js';
import { readArrowSnapshot, type ArrowSnapshot } from './decode-arrow.js';

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
 * One part's bytes -> its columns, checked: sha256 (unless it was checked as the bytes
 * streamed in), contract 6's column table, row count.
 * Throws an OpsError saying why the part (so the whole generation) is refused.
 */
export function readPart(bytes: Uint8Array, want: PartExpectation, checkSha = true): ArrowSnapshot {
  if (checkSha) checkSha256(sha256Hex(bytes), want);
  let snap: ArrowSnapshot;
  try {
    snap = readArrowSnapshot(bytes);
  } catch (e) {
    throw new OpsError('snapshot_invalid', `${want.object}: ${(e as Error).message}`);
  }
  if (snap.rows !== want.rows) throw new OpsError('row_count_mismatch', `manifest says ${want.rows} rows, ${want.object} holds ${snap.rows}`);
  return snap;
}

/** Refuses a part whose bytes hashed to another digest than its manifest says. */
export function checkSha256(digest: string, want: PartExpectation): void {
  if (digest !== want.sha256) {
    throw new OpsError('checksum_mismatch', `sha256 mismatch for ${want.object}: manifest says ${want.sha256}, object is ${digest}`);
  }
}
