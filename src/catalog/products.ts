import { BUILTIN_CATALOG } from './builtin.js';
import type { ProductSpec } from './catalog.js';

/**
 * The built-in catalog's products, for tools that work on the demo data (loaders, bench,
 * tests). The server and the CLI read the catalog in force instead (catalog.ts).
 */
export type { FilterSpec, ProductSpec } from './catalog.js';

export const PRODUCTS: readonly ProductSpec[] = BUILTIN_CATALOG.products;

export function findProduct(id: string): ProductSpec | undefined {
  return BUILTIN_CATALOG.product(id);
}

export function isNamedDataset(productId: string, dataset: string): boolean {
  return BUILTIN_CATALOG.has(productId, dataset);
}

export function allNamedDatasets(): Array<{ productId: string; dataset: string }> {
  return BUILTIN_CATALOG.entries.map((e) => ({ productId: e.product.id, dataset: e.dataset.name }));
}
