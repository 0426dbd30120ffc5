import { allNamedDatasets } from './products.js';

/**
 * `--datasets gbsi_us/*,pemi/grid_stress`: which datasets a replica loads and serves (a
 * shard of a replica group routed by path). Each pattern is `product/dataset` where either
 * part may be `*` or end in `*` (a prefix). A pattern that names no dataset of the catalog is
 * an error at start-up: a typo must not silently leave a shard serving nothing.
 */
export class DatasetSelection {
  private constructor(
    /** the patterns as given, for messages ("this replica serves ...") */
    readonly text: string,
    private readonly ids: ReadonlySet<string>,
  ) {}

  /** Every named dataset. */
  static all(): DatasetSelection {
    return new DatasetSelection('*/*', new Set(allNamedDatasets().map((d) => `${d.productId}/${d.dataset}`)));
  }

  /**
   * Throws an Error with a message for the operator when a pattern is malformed or matches
   * nothing (a phrase that follows "--datasets: ", like every option's message).
   */
  static parse(text: string): DatasetSelection {
    const named = allNamedDatasets().map((d) => `${d.productId}/${d.dataset}`);
    const ids = new Set<string>();
    const patterns = text.split(',').map((p) => p.trim());
    for (const pattern of patterns) {
      const parts = pattern.split('/');
      if (parts.length !== 2 || parts.some((p) => p === '' || p.slice(0, -1).includes('*'))) {
        throw new Error(`"${pattern}" is not product/dataset (either part may be * or end in *), e.g. gbsi_us/*,pemi/grid_stress`);
      }
      const hits = named.filter((id) => {
        const [p, d] = id.split('/') as [string, string];
        return matches(parts[0]!, p) && matches(parts[1]!, d);
      });
      if (hits.length === 0) throw new Error(`"${pattern}" matches none of the named datasets (${named.join(', ')})`);
      for (const h of hits) ids.add(h);
    }
    return new DatasetSelection(patterns.join(','), ids);
  }

  has(productId: string, dataset: string): boolean {
    return this.ids.has(`${productId}/${dataset}`);
  }

  /** The selected ids in catalog order. */
  list(): string[] {
    return allNamedDatasets()
      .map((d) => `${d.productId}/${d.dataset}`)
      .filter((id) => this.ids.has(id));
  }
}

function matches(pattern: string, value: string): boolean {
  return pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : pattern === value;
}
