import { PRODUCTS } from '../catalog/products.js';
import { DatasetSlot } from './dataset-slot.js';

/** The nine named datasets (spec 2.2), each in its slot, plus whether start-up loading is over. */
export class DatasetRegistry {
  readonly slots: readonly DatasetSlot[];
  private readonly byId: Map<string, DatasetSlot>;
  private _ready = false;

  constructor(retainedBytes?: number) {
    this.slots = PRODUCTS.flatMap((p) => p.datasets.map((d) => new DatasetSlot(p, d, retainedBytes)));
    this.byId = new Map(this.slots.map((s) => [s.id, s]));
  }

  /** true once every dataset found at the source has been tried (contract 8: /readyz) */
  get ready(): boolean {
    return this._ready;
  }

  /** Start-up loading is over (never undone: a later failure keeps the last good generation). */
  markReady(): void {
    this._ready = true;
  }

  /** A slot by its `product/dataset` id. */
  byName(id: string): DatasetSlot | undefined {
    return this.byId.get(id);
  }

  get(productId: string, dataset: string): DatasetSlot | undefined {
    return this.byId.get(`${productId}/${dataset}`);
  }
}
