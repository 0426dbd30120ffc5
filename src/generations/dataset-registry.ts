import { DatasetSelection } from '../catalog/dataset-selection.js';
import { BUILTIN_CATALOG } from '../catalog/builtin.js';
import type { Catalog } from '../catalog/catalog.js';
import { DatasetSlot } from './dataset-slot.js';

/**
 * The named datasets (spec 2.2) this replica serves, each in its slot (all nine unless
 * `--datasets` selects a shard), plus whether start-up loading is over and whether the
 * process is draining (SIGTERM).
 */
export class DatasetRegistry {
  readonly slots: readonly DatasetSlot[];
  private readonly byId: Map<string, DatasetSlot>;
  private _ready = false;
  private _draining = false;

  constructor(
    /** the datasets this replica loads and serves; the others answer 404 */
    readonly selection: DatasetSelection = DatasetSelection.all(),
    /** the catalog in force */
    readonly catalog: Catalog = BUILTIN_CATALOG,
  ) {
    this.slots = catalog.entries.filter((e) => selection.has(e.product.id, e.dataset.name)).map((e) => new DatasetSlot(e.product, e.dataset.name));
    this.byId = new Map(this.slots.map((s) => [s.id, s]));
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
