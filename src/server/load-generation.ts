import { ObjectMissingError, type DatasetRef, type SnapshotSource } from '../../loaders/snapshot-source.js';
import { manifestPath, objectPath, parseManifest, type Manifest } from '../snapshot/manifest.js';
import type { Clock } from '../time/clock.js';
import type { DatasetSlot } from './dataset-slot.js';
import { makeGeneration, type Generation } from './generation.js';
import type { TableBuilder } from './table-builder.js';

/** The source could not be reached or answered with an error: worth retrying as it is. */
export class SourceUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceUnavailableError';
  }
}

async function fromSource<T>(what: string, op: () => Promise<T>): Promise<T> {
  try {
    return await op();
  } catch (e) {
    if (e instanceof ObjectMissingError) throw e;
    throw new SourceUnavailableError(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

export type ManifestCheck =
  | { readonly status: 'unchanged' }
  | { readonly status: 'missing' }
  | { readonly status: 'ok'; readonly manifest: Manifest; readonly etag: string };

/** Reads and validates a dataset's manifest (throws with a one-line reason when it is malformed). */
export async function readManifest(source: SnapshotSource, ref: DatasetRef, etag: string | null): Promise<ManifestCheck> {
  const path = manifestPath(ref.productId, ref.dataset);
  const r = await fromSource(`reading ${path}`, () => source.readIfChanged(path, etag));
  if (r.status !== 'ok') return r;
  const manifest = parseManifest(r.bytes);
  if (manifest.product_id !== ref.productId || manifest.dataset !== ref.dataset) {
    throw new Error(`manifest names ${manifest.product_id}/${manifest.dataset}, not ${ref.productId}/${ref.dataset}`);
  }
  return { status: 'ok', manifest, etag: r.etag };
}

/**
 * Manifest -> a serving generation: fetch the object, then (on the builder) check its
 * sha256, row count and schema (contract 6) and the product's filter columns (contract 3),
 * sort and index. Throws with a reason; never touches the slot.
 */
export async function loadGeneration(
  source: SnapshotSource,
  slot: Pick<DatasetSlot, 'product' | 'dataset' | 'floorUs'>,
  manifest: Manifest,
  clock: Clock,
  builder: TableBuilder,
  keepBytes = false,
): Promise<{ generation: Generation; bytes: Uint8Array | null }> {
  const started = clock.now();
  const path = objectPath(slot.product.id, slot.dataset, manifest.object);
  const bytes = await fromSource(`reading ${path}`, () => source.readObject(path));
  return buildGeneration(bytes, slot, manifest, clock, builder, keepBytes, started);
}

/**
 * Bytes of a manifest's object -> a generation (used for the source and the local cache
 * alike). The bytes are the builder's from then on; `keepBytes` gets them back.
 */
export async function buildGeneration(
  bytes: Uint8Array,
  slot: Pick<DatasetSlot, 'product' | 'dataset' | 'floorUs'>,
  manifest: Manifest,
  clock: Clock,
  builder: TableBuilder,
  keepBytes = false,
  started = clock.now(),
): Promise<{ generation: Generation; bytes: Uint8Array | null }> {
  const built = await builder.build(bytes, {
    object: manifest.object,
    sha256: manifest.sha256,
    rows: manifest.rows,
    filterColumns: slot.product.filters.map((f) => f.param),
    floorUs: slot.floorUs,
  }, keepBytes);
  const loadedAtMs = clock.now();
  const table = built.table;
  return { generation: makeGeneration({ number: manifest.generation, manifest, table, loadedAtMs, loadMs: loadedAtMs - started }), bytes: built.bytes };
}
