import { DatasetSelection } from '../catalog/dataset-selection.js';
import { BUILTIN_CATALOG } from '../catalog/builtin.js';
import type { Catalog, ProductSpec } from '../catalog/catalog.js';
import { DatasetSlot } from './dataset-slot.js';
import type { Generation } from './generation.js';

/** What a new catalog did to the datasets served here. */
export interface CatalogChange {
  /** datasets the new catalog names (and the selection takes) that were not served: pending until their manifest is read */
  readonly added: readonly DatasetSlot[];
  /** datasets no longer named: they answer 404 from now on */
  readonly removed: readonly DatasetSlot[];
  /** datasets whose product changed (name, filters or floor), with the product before */
  readonly changed: ReadonlyArray<{ readonly slot: DatasetSlot; readonly before: ProductSpec }>;
  /** generations the slots let go (removed datasets', superseded ones of a new floor; the caller adds those it unloads): each thread's reaper collects them */
  readonly dropped: Generation[];
}

/**
 * The datasets of the catalog in force (contract 13) this replica serves, each in its slot
 * (all of them unless `--datasets` selects a shard), plus whether start-up loading is over
 * and whether the process is draining (SIGTERM).
 *
 * A new catalog is applied whole, between two requests of the thread that owns this
 * registry (`apply`); `version` counts the catalogs applied, so that what remembers a path's
 * dataset (the router) knows when to forget.
 */
export class DatasetRegistry {
  private _slots: DatasetSlot[];
  private byId: Map<string, DatasetSlot>;
  private _catalog: Catalog;
  private _version = 0;
  private _ready = false;
  private _draining = false;

  constructor(
    /** the datasets this replica loads and serves; the others answer 404 */
    readonly selection: DatasetSelection = DatasetSelection.all(),
    catalog: Catalog = BUILTIN_CATALOG,
  ) {
    this._catalog = catalog;
    this._slots = catalog.entries.filter((e) => selection.has(e.product.id, e.dataset.name)).map((e) => new DatasetSlot(e.product, e.dataset.name));
    this.byId = new Map(this._slots.map((s) => [s.id, s]));
  }

  /** the catalog in force */
  get catalog(): Catalog {
    return this._catalog;
  }

  /** the served datasets, in catalog order (a new array after each catalog change) */
  get slots(): readonly DatasetSlot[] {
    return this._slots;
  }

  /** catalogs applied since start */
  get version(): number {
    return this._version;
  }

  /**
   * Puts `catalog` in force: slots for the datasets it adds, none for those it removes (they
   * are retired: their generations go once requests in flight let them go), each kept
   * slot told its product as the new catalog says. Re-flooring the changed tables is the
   * caller's (the loading thread computes them, serving threads receive them): `refloor`
   * gives each changed slot's live generation under its new product, or null.
   */
  apply(catalog: Catalog, refloor: (slot: DatasetSlot, product: ProductSpec) => Parameters<DatasetSlot['respec']>[1] = () => null): CatalogChange {
    const added: DatasetSlot[] = [];
    const changed: Array<{ slot: DatasetSlot; before: ProductSpec }> = [];
    const dropped: Generation[] = [];
    const next: DatasetSlot[] = [];
    for (const e of catalog.entries) {
      if (!this.selection.has(e.product.id, e.dataset.name)) continue;
      const slot = this.byId.get(e.id);
      if (slot === undefined) {
        const fresh = new DatasetSlot(e.product, e.dataset.name);
        added.push(fresh);
        next.push(fresh);
        continue;
      }
      const before = slot.product;
      if (JSON.stringify(before) !== JSON.stringify(e.product)) {
        dropped.push(...slot.respec(e.product, before.floor === e.product.floor ? null : refloor(slot, e.product)));
        changed.push({ slot, before });
      }
      next.push(slot);
    }
    const kept = new Set(next);
    const removed = this._slots.filter((s) => !kept.has(s));
    for (const s of removed) dropped.push(...s.retire());
    this._catalog = catalog;
    this._slots = next;
    this.byId = new Map(next.map((s) => [s.id, s]));
    this._version++;
    return { added, removed, changed, dropped };
  }

  /** true once every dataset found at the source has been tried (contract 8: /readyz) */
  get ready(): boolean {
    return this._ready;
  }

  /** What /readyz says: loaded and not draining. A draining replica still answers, but balancers should stop sending. */
  get readyForTraffic(): boolean {
    return this._ready && !this._draining;
  }

  /** Start-up loading is over (never undone: a later failure keeps the last good generation). */
  markReady(): void {
    this._ready = true;
  }

  /** The process is stopping: /readyz answers 503 from now on (never undone). */
  markDraining(): void {
    this._draining = true;
  }

  /** A slot by its `product/dataset` id. */
  byName(id: string): DatasetSlot | undefined {
    return this.byId.get(id);
  }

  get(productId: string, dataset: string): DatasetSlot | undefined {
    return this.byId.get(`${productId}/${dataset}`);
  }
}
