/**
 * Invented products for the tests of contract 13 (the catalog is data): a catalog.json that
 * adds them to the built-in products, so one source serves both. Their filters and floors
 * are also written out in random-snapshot.ts (PRODUCT_FILTERS, FLOOR_DATE), which the
 * reference models read; inventedCatalogJson checks the two agree.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BUILTIN_CATALOG } from '../../src/catalog/builtin.js';
import { Catalog, type ProductSpec } from '../../src/catalog/catalog.js';
import { catalogBytes } from '../../src/catalog/catalog-document.js';
import { FLOOR_DATE, PRODUCT_FILTERS } from './random-snapshot.js';

/** A series key of two columns, both filters; and one of none (a single series), without filters. */
export const INVENTED_PRODUCTS: readonly ProductSpec[] = [
  {
    id: 'acme_grid',
    name: 'Acme Grid Load',
    floor: '2026-02-20',
    filters: [
      { param: 'site', allowed: null },
      { param: 'band', allowed: null },
    ],
    datasets: [{ name: 'load_by_site', description: 'load by site and band' }],
  },
  { id: 'flatline', name: 'Flatline', floor: '2026-01-20', filters: [], datasets: [{ name: 'level', description: 'one series' }] },
];

/** The series key each invented dataset is generated with. */
export const INVENTED_KEYS: Readonly<Record<string, readonly string[]>> = { acme_grid: ['site', 'band'], flatline: [] };

/** catalog.json of the built-in products plus the invented ones. */
export function inventedCatalogJson(): Uint8Array {
  for (const p of INVENTED_PRODUCTS) {
    if (FLOOR_DATE[p.id] !== p.floor || JSON.stringify(PRODUCT_FILTERS[p.id]) !== JSON.stringify(p.filters.map((f) => f.param))) {
      throw new Error(`random-snapshot.ts disagrees with the invented product ${p.id}`);
    }
  }
  return catalogBytes(new Catalog([...BUILTIN_CATALOG.products, ...INVENTED_PRODUCTS]));
}

/** Writes that catalog.json into a source folder (a harness's `prepare`). */
export async function writeInventedCatalog(dir: string): Promise<void> {
  await writeFile(join(dir, 'catalog.json'), inventedCatalogJson());
}
