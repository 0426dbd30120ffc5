import type { SnapshotSource } from '../source/snapshot-source.js';
import { fromSource } from '../ops-errors.js';
import { objectPath, type Manifest } from '../snapshot/manifest.js';
import type { Clock } from '../time/clock.js';
import type { DatasetSlot } from './dataset-slot.js';
import { makeGeneration, nextGenerationUid, type Generation } from './generation.js';
import type { TableBuilder } from './table-builder.js';

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
  const built = await builder.build(
    bytes,
    {
      object: manifest.object,
      sha256: manifest.sha256,
      rows: manifest.rows,
      filterColumns: slot.product.filters.map((f) => f.param),
      floorUs: slot.floorUs,
    },
    keepBytes,
  );
  const loadedAtMs = clock.now();
  const table = built.table;
  return {
    generation: makeGeneration({ number: manifest.generation, uid: nextGenerationUid(), manifest, table, loadedAtMs, loadMs: loadedAtMs - started }),
    bytes: built.bytes,
  };
}
