import { PRODUCTS } from '../catalog/products.js';
import { DatasetSlot } from './dataset-slot.js';

/** The nine named datasets (spec 2.2), each in its slot, plus whether start-up loading is over. */
export class DatasetRegistry {
  readonly slots: readonly DatasetSlot[];
  private readonly byId: Map<string, DatasetSlot>;
  /** true once every dataset found at the source has been tried (contract 8: /readyz) */
  ready = false;

  constructor(retainedBytes?: number) {
    this.slots = PRODUCTS.flatMap((p) => p.datasets.map((d) => new DatasetSlot(p, d, retainedBytes)));
    this.byId = new Map(this.slots.map((s) => [s.id, s]));
  }

  get(productId: string, dataset: string): DatasetSlot | undefined {
    return this.byId.get(`${productId}/${dataset}`);
  }
}
