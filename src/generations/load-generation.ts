import { createHash } from 'node:crypto';
import { streamObject, type SnapshotSource } from '../source/snapshot-source.js';
import { fromSource } from '../ops-errors.js';
import { objectPath, partsOf, type Manifest } from '../snapshot/manifest.js';
import { checkSha256, type SnapshotExpectations } from '../store/snapshot-to-table.js';
import type { Clock } from '../time/clock.js';
import type { DatasetSlot } from './dataset-slot.js';
import { makeGeneration, nextGenerationUid, type Generation } from './generation.js';
import { runPooled } from './run-pooled.js';
import type { TableBuilder } from './table-builder.js';

/**
 * Parts of one generation in memory at once (fetching, verified and waiting for their turn,
 * or being decoded): enough to keep a store busy, few enough to bound the bytes in flight
 * (contract 14: a load's peak is the generations in force, the new one's columns and these).
 */
export const PARTS_IN_FLIGHT = 4;

/** Where the verified parts of a generation go as they arrive (`--cache-dir`, snapshot-cache.ts). */
export interface PartKeeper {
  keep(index: number, bytes: Uint8Array): Promise<void>;
}

type SlotRef = Pick<DatasetSlot, 'product' | 'dataset' | 'floorUs'>;

/** What the manifest and the product ask of a generation's objects. */
export function expectationsOf(slot: SlotRef, manifest: Manifest): SnapshotExpectations {
  return { parts: partsOf(manifest), filterColumns: slot.product.filters.map((f) => f.param), floorUs: slot.floorUs };
}

/**
 * Manifest -> a serving generation. Parts are fetched a few at once, each hashed as its
 * bytes stream in and refused at its end if the sha256 differs; they are then decoded, in
 * manifest order, into the generation's columns on the builder (row count, schema, series
 * order across parts: contract 6, 14; the product's filter columns: contract 3) and dropped.
 * The first failure refuses the whole generation: the parts not started are not fetched and
 * the build is dropped. Throws with a reason; never touches the slot.
 */
export async function loadGeneration(
  source: SnapshotSource,
  slot: SlotRef,
  manifest: Manifest,
  clock: Clock,
  builder: TableBuilder,
  keeper: PartKeeper | null = null,
): Promise<{ generation: Generation }> {
  const started = clock.now();
  const want = expectationsOf(slot, manifest);
  const refs = partsOf(manifest);
  const build = await builder.open(want);
  // turns[i] settles once part i may be added (every part before it is in).
  const turns = refs.map(() => deferred());
  turns[0]?.resolve();
  let failure: { error: unknown } | null = null;
  const fail = (error: unknown): void => {
    if (failure !== null) return;
    failure = { error };
    for (const t of turns) t.resolve();
  };
  try {
    await runPooled(
      refs.map((ref, index) => ({ ref, index })),
      PARTS_IN_FLIGHT,
      async ({ ref, index }) => {
        if (failure !== null) return;
        try {
          const path = objectPath(slot.product.id, slot.dataset, ref.object);
          const hash = createHash('sha256');
          const bytes = await fromSource(`reading ${path}`, () => streamObject(source, path, ref.bytes ?? undefined, (b) => hash.update(b)));
          checkSha256(hash.digest('hex'), ref);
          await turns[index]!.promise;
          if (failure !== null) return;
          await keeper?.keep(index, bytes);
          await build.add(bytes, true);
          turns[index + 1]?.resolve();
        } catch (error) {
          fail(error);
        }
      },
    );
    if (failure !== null) throw (failure as { error: unknown }).error;
    const table = await build.finish();
    const loadedAtMs = clock.now();
    return {
      generation: makeGeneration({ number: manifest.generation, uid: nextGenerationUid(), manifest, table, loadedAtMs, loadMs: loadedAtMs - started }),
    };
  } catch (e) {
    build.abort();
    throw e;
  }
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
