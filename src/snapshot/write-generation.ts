/**
 * Publishes one snapshot generation of a dataset (contract 6, 12): the immutable Arrow
 * object first, then the generation's history manifest, the manifest that points at it
 * last, so a reader never follows a manifest to an object that is not there yet, and every
 * generation a server ever served can be loaded again from history/.
 */
import { createHash } from 'node:crypto';
import { RecordBatchReader } from 'apache-arrow';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { historyPath, MANIFEST_FORMAT, manifestBytes, manifestPath, manifestSchema, objectPath } from './manifest.js';
import { PARTS_MANIFEST_FORMAT, partsManifestSchema, type PartsManifest, type SingleManifest } from './manifest.js';
import { parseRfc3339 } from '../time/instant.js';

export interface GenerationRef {
  readonly productId: string;
  readonly dataset: string;
}

/** `snapshots/00000007.arrow`: the object name of a generation, relative to the dataset folder. */
export function generationObjectName(generation: number): string {
  return `snapshots/${String(generation).padStart(8, '0')}.arrow`;
}

export async function writeGeneration(
  source: SnapshotSource,
  ref: GenerationRef,
  bytes: Uint8Array,
  generation: number,
  createdAt: string,
): Promise<SingleManifest> {
  if (parseRfc3339(createdAt) === null) throw new Error(`created_at must be an RFC 3339 timestamp, got ${JSON.stringify(createdAt)}`);
  // Counting from the bytes (not trusting a caller's number) also proves they decode.
  const rows = countArrowRows(bytes);
  const manifest = manifestSchema.parse({
    format: MANIFEST_FORMAT,
    product_id: ref.productId,
    dataset: ref.dataset,
    generation,
    object: generationObjectName(generation),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    rows,
    created_at: createdAt,
  });
  await source.writeObject(objectPath(ref.productId, ref.dataset, manifest.object), bytes);
  const text = manifestBytes(manifest);
  await source.writeObject(historyPath(ref.productId, ref.dataset, generation), text);
  await source.writeObject(manifestPath(ref.productId, ref.dataset), text);
  return manifest;
}

/** `snapshots/00000007/00003.arrow`: part 3 of generation 7 (contract 14), relative to the dataset folder. */
export function partObjectName(generation: number, part: number): string {
  return `snapshots/${String(generation).padStart(8, '0')}/${String(part).padStart(5, '0')}.arrow`;
}

/**
 * A generation of many parts (contract 14), in the same order as writeGeneration: every part,
 * then the history manifest, then manifest.json. The parts must already be in series order;
 * the server checks that, not this.
 */
export async function writePartsGeneration(
  source: SnapshotSource,
  ref: GenerationRef,
  parts: readonly Uint8Array[],
  generation: number,
  createdAt: string,
): Promise<PartsManifest> {
  if (parseRfc3339(createdAt) === null) throw new Error(`created_at must be an RFC 3339 timestamp, got ${JSON.stringify(createdAt)}`);
  const refs = parts.map((bytes, i) => ({
    object: partObjectName(generation, i),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    rows: countArrowRows(bytes),
    bytes: bytes.byteLength,
  }));
  const manifest = partsManifestSchema.parse({
    format: PARTS_MANIFEST_FORMAT,
    product_id: ref.productId,
    dataset: ref.dataset,
    generation,
    parts: refs,
    rows: refs.reduce((n, p) => n + p.rows, 0),
    created_at: createdAt,
  });
  for (const [i, bytes] of parts.entries()) await source.writeObject(objectPath(ref.productId, ref.dataset, refs[i]!.object), bytes);
  const text = manifestBytes(manifest);
  await source.writeObject(historyPath(ref.productId, ref.dataset, generation), text);
  await source.writeObject(manifestPath(ref.productId, ref.dataset), text);
  return manifest;
}

/** Rows of an Arrow IPC file or stream, summed over its record batches. */
export function countArrowRows(bytes: Uint8Array): number {
  let rows = 0;
  for (const batch of RecordBatchReader.from(bytes)) rows += batch.numRows;
  return rows;
}
