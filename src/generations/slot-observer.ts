import type { Catalog } from '../catalog/catalog.js';
import type { CatalogChange } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';

/**
 * Who hears of the loader's work, given to the loader at construction: the serving pool
 * (which mirrors every slot on its threads) or nobody (one thread serves the loader's own
 * slots).
 */
export interface SlotObserver {
  /** After every settled check of a slot: loaded, unchanged or failed (state and generation may have changed). */
  slotChecked(slot: DatasetSlot): void;
  /** Start-up loading is over: /readyz may say ready. */
  ready(): void;
  /** A new catalog is in force on the loading thread (contract 13): datasets added, removed, changed (re-floored generations in their slots). */
  catalogChanged?(change: CatalogChange, catalog: Catalog): void;
}

/** For a single serving thread: the registry it serves is the loader's own. */
export const noObserver: SlotObserver = {
  slotChecked: () => undefined,
  ready: () => undefined,
};

/** Two observers, told in order (the serving pool first, then the memory budget: see retained-generations.ts). */
export function bothObservers(first: SlotObserver, second: SlotObserver): SlotObserver {
  return {
    slotChecked: (slot) => {
      first.slotChecked(slot);
      second.slotChecked(slot);
    },
    ready: () => {
      first.ready();
      second.ready();
    },
    catalogChanged: (change, catalog) => {
      first.catalogChanged?.(change, catalog);
      second.catalogChanged?.(change, catalog);
    },
  };
}
