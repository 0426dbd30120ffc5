import type { SnapshotSource } from '../source/snapshot-source.js';
import { fromSource } from '../ops-errors.js';
import { objectPath, partsOf, type Manifest } from '../snapshot/manifest.js';
import type { Clock } from '../time/clock.js';
import type { DatasetSlot } from './dataset-slot.js';
import { makeGeneration, nextGenerationUid, type Generation } from './generation.js';
import { runPooled } from './run-pooled.js';
import type { TableBuilder } from './table-builder.js';

/** Parts of one generation fetched at once: enough to keep a store busy, few enough to bound the bytes in flight. */
export const PARTS_IN_FLIGHT = 4;

/**
 * Manifest -> a serving generation: fetch its objects (a few parts at once), then (on the
 * builder) check each part's sha256, row count and schema (contract 6, 14), the parts'
 * series order, and the product's filter columns (contract 3), sort and index. Throws
 * with a reason; never touches the slot.
 */
export async function loadGeneration(
  source: SnapshotSource,
  slot: Pick<DatasetSlot, 'product' | 'dataset' | 'floorUs'>,
  manifest: Manifest,
  clock: Clock,
  builder: TableBuilder,
  keepBytes = false,
): Promise<{ generation: Generation; parts: Uint8Array[] | null }> {
  const started = clock.now();
  const refs = partsOf(manifest);
  const parts = new Array<Uint8Array>(refs.length);
  // The first failure refuses the generation: the parts not started yet are not fetched.
  let failure: { error: unknown } | null = null;
  await runPooled(
    refs.map((r, i) => ({ r, i })),
    PARTS_IN_FLIGHT,
    async ({ r, i }) => {
      if (failure !== null) return;
      const path = objectPath(slot.product.id, slot.dataset, r.object);
      try {
        parts[i] = await fromSource(`reading ${path}`, () => source.readObject(path, r.bytes ?? undefined));
      } catch (error) {
        failure ??= { error };
      }
    },
  );
  if (failure !== null) throw (failure as { error: unknown }).error;
  return buildGeneration(parts, slot, manifest, clock, builder, keepBytes, started);
}

/**
 * A manifest's objects -> a generation (used for the source and the local cache alike). The
 * bytes are the builder's from then on; `keepBytes` gets them back.
 */
export async function buildGeneration(
  parts: Uint8Array[],
  slot: Pick<DatasetSlot, 'product' | 'dataset' | 'floorUs'>,
  manifest: Manifest,
  clock: Clock,
  builder: TableBuilder,
  keepBytes = false,
  started = clock.now(),
): Promise<{ generation: Generation; parts: Uint8Array[] | null }> {
  const built = await builder.build(
    parts,
    {
      parts: partsOf(manifest),
      filterColumns: slot.product.filters.map((f) => f.param),
      floorUs: slot.floorUs,
    },
    keepBytes,
  );
  const loadedAtMs = clock.now();
  const table = built.table;
  return {
    generation: makeGeneration({ number: manifest.generation, uid: nextGenerationUid(), manifest, table, loadedAtMs, loadMs: loadedAtMs - started }),
    parts: built.parts,
  };
}
