import { dayEndUs, parseDate } from '../time/instant.js';

/**
 * The catalog: which products and datasets exist, their filters (contract 3) and vintage
 * floors (spec 8). The built-in one (builtin.ts) is the spec's; a source may replace it
 * with its own `catalog.json` (contract 13, catalog-document.ts). Everything that names a
 * product or a dataset reads the catalog in force, never a list of its own.
 */
export interface FilterSpec {
  /** Query parameter name; it is also the series-key column it filters. */
  readonly param: string;
  /** Allowed values; null means any value. */
  readonly allowed: readonly string[] | null;
}

export interface DatasetSpec {
  readonly name: string;
  readonly description: string;
}

export interface ProductSpec {
  readonly id: string;
  readonly name: string;
  readonly datasets: readonly DatasetSpec[];
  readonly filters: readonly FilterSpec[];
  /** Vintage floor date (spec 8), YYYY-MM-DD; null = no floor. */
  readonly floor: string | null;
}

/** One dataset of the catalog with its product. */
export interface CatalogEntry {
  readonly product: ProductSpec;
  readonly dataset: DatasetSpec;
  /** `product/dataset` */
  readonly id: string;
}

/** A validated catalog (catalog-document.ts checks ids, uniqueness and reserved words before one is made). */
export class Catalog {
  private readonly byId: ReadonlyMap<string, ProductSpec>;
  private readonly byEntry: ReadonlyMap<string, CatalogEntry>;
  /** every dataset, in catalog order */
  readonly entries: readonly CatalogEntry[];

  constructor(readonly products: readonly ProductSpec[]) {
    this.byId = new Map(products.map((p) => [p.id, p]));
    this.entries = products.flatMap((product) => product.datasets.map((dataset) => ({ product, dataset, id: `${product.id}/${dataset.name}` })));
    this.byEntry = new Map(this.entries.map((e) => [e.id, e]));
  }

  product(id: string): ProductSpec | undefined {
    return this.byId.get(id);
  }

  /** A dataset by product id and dataset name. */
  entry(productId: string, dataset: string): CatalogEntry | undefined {
    return this.byEntry.get(`${productId}/${dataset}`);
  }

  has(productId: string, dataset: string): boolean {
    return this.byEntry.has(`${productId}/${dataset}`);
  }

  /** `product/dataset` of every dataset, in catalog order. */
  ids(): string[] {
    return this.entries.map((e) => e.id);
  }
}

/** Whether two product specs serve a dataset alike (floor and filters: what a table is built and queried with). */
export function sameServing(a: ProductSpec, b: ProductSpec): boolean {
  return a.floor === b.floor && JSON.stringify(a.filters) === JSON.stringify(b.filters);
}

/** The end of a floor day, µs (what a table's thresholds are computed with); no floor = -Infinity (every observation counts as observed). */
export function floorUsOf(floor: string | null): number {
  return floor === null ? -Infinity : dayEndUs(parseDate(floor)!);
}
