import type { SnapshotSource } from '../source/snapshot-source.js';
import { fromSource, opsCodeOf } from '../ops-errors.js';
import { historyPath, manifestPath, parseManifest, type Manifest } from '../snapshot/manifest.js';
import type { Clock } from '../time/clock.js';
import type { DatasetSlot } from './dataset-slot.js';
import type { Generation } from './generation.js';
import { GenerationUnavailableError } from './generation-supply.js';
import { loadGeneration } from './load-generation.js';
import type { TableBuilder } from './table-builder.js';

export interface HistoryOptions {
  readonly source: SnapshotSource;
  readonly clock: Clock;
  readonly builder: TableBuilder;
}

/**
 * Loads a dataset's generation N from the source's history (contract 12):
 * `history/<N, 8 digits>.json`, then the object it names, verified exactly as a refresh
 * verifies one (sha256, rows, schema, filter columns: load-generation.ts). One load per
 * generation at a time, however many requests ask. Never touches the slot.
 */
/** Refusals remembered (a history manifest and its object are immutable): asking again costs no download. */
const MAX_REFUSALS = 1024;

export class GenerationHistory {
  private readonly loading = new Map<string, Promise<Generation>>();
  /** why a generation was refused, by `dataset#generation`; oldest first */
  private readonly refused = new Map<string, string>();

  constructor(private readonly o: HistoryOptions) {}

  load(slot: DatasetSlot, number: number): Promise<Generation> {
    const key = `${slot.id}#${number}`;
    const why = this.refused.get(key);
    if (why !== undefined) return Promise.reject(new GenerationUnavailableError('refused', why));
    let p = this.loading.get(key);
    if (p === undefined) {
      p = this.read(slot, number)
        .catch((e: unknown) => {
          if (e instanceof GenerationUnavailableError && e.kind === 'refused') this.remember(key, e.message);
          throw e;
        })
        .finally(() => this.loading.delete(key));
      this.loading.set(key, p);
    }
    return p;
  }

  private remember(key: string, why: string): void {
    if (this.refused.size >= MAX_REFUSALS) this.refused.delete(this.refused.keys().next().value!);
    this.refused.set(key, why);
  }

  private async read(slot: DatasetSlot, number: number): Promise<Generation> {
    const what = `generation ${number} of ${slot.id}`;
    try {
      // A history manifest newer than the served generation may be the leftover of a publish
      // that crashed before its manifest.json: only what manifest.json reached is served.
      if (slot.current === null || number > slot.current.number) await this.expectPublished(slot, number, what);
      const path = historyPath(slot.product.id, slot.dataset, number);
      const r = await fromSource(`reading ${path}`, () => this.o.source.readIfChanged(path, null));
      if (r.status !== 'ok') throw new GenerationUnavailableError('gone', `${what} is not at the source (no ${path})`);
      const manifest = this.check(parseManifest(r.bytes), slot, number, path);
      const { generation } = await loadGeneration(this.o.source, slot, manifest, this.o.clock, this.o.builder);
      return generation;
    } catch (e) {
      if (e instanceof GenerationUnavailableError) throw e;
      const code = opsCodeOf(e);
      const reason = e instanceof Error ? e.message : String(e);
      if (code === 'source_unreachable') throw new GenerationUnavailableError('unreachable', `${what} cannot be loaded now: ${reason}`);
      if (code === 'object_missing') throw new GenerationUnavailableError('gone', `${what} is gone: ${reason}`);
      throw new GenerationUnavailableError('refused', `${what} was refused: ${reason}`);
    }
  }

  private async expectPublished(slot: DatasetSlot, number: number, what: string): Promise<void> {
    const path = manifestPath(slot.product.id, slot.dataset);
    const r = await fromSource(`reading ${path}`, () => this.o.source.readIfChanged(path, null));
    const live = r.status === 'ok' ? parseManifest(r.bytes).generation : null;
    if (live === null || live < number)
      throw new GenerationUnavailableError('gone', `${what} has not been published (the dataset is at generation ${live ?? 'none'})`);
  }

  /** The history manifest must be this dataset's generation N (a copied or renamed file is refused). */
  private check(m: Manifest, slot: DatasetSlot, number: number, path: string): Manifest {
    if (m.product_id !== slot.product.id || m.dataset !== slot.dataset || m.generation !== number) {
      throw new GenerationUnavailableError(
        'refused',
        `${path} names ${m.product_id}/${m.dataset} generation ${m.generation}, not ${slot.id} generation ${number}`,
      );
    }
    return m;
  }
}
