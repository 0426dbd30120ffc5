import { BUILTIN_CATALOG } from './builtin.js';
import type { Catalog } from './catalog.js';

/**
 * `--datasets gbsi_us/*,pemi/grid_stress`: which datasets a replica loads and serves (a
 * shard of a replica group routed by path). Each pattern is `product/dataset` where either
 * part may be `*` or end in `*` (a prefix). Patterns are matched against the catalog in
 * force whenever it changes (contract 13), so a dataset added later joins the shards whose
 * patterns match it; a pattern that matches nothing yet is logged at start-up, not refused
 * (its dataset may come with the next catalog).
 */
export class DatasetSelection {
  private constructor(
    /** the patterns as given, for messages ("this replica serves ...") */
    readonly text: string,
    private readonly patterns: ReadonlyArray<readonly [string, string]>,
  ) {}

  /** Every dataset of the catalog in force. */
  static all(): DatasetSelection {
    return new DatasetSelection('*/*', [['*', '*']]);
  }

  /**
   * Throws an Error with a message for the operator when a pattern is malformed (a phrase
   * that follows "--datasets: ", like every option's message).
   */
  static parse(text: string): DatasetSelection {
    const patterns = text.split(',').map((p) => p.trim());
    const parsed = patterns.map((pattern) => {
      const parts = pattern.split('/');
      if (parts.length !== 2 || parts.some((p) => p === '' || p.slice(0, -1).includes('*'))) {
        throw new Error(`"${pattern}" is not product/dataset (either part may be * or end in *), e.g. gbsi_us/*,pemi/grid_stress`);
      }
      return [parts[0]!, parts[1]!] as const;
    });
    return new DatasetSelection(patterns.join(','), parsed);
  }

  has(productId: string, dataset: string): boolean {
    return this.patterns.some(([p, d]) => matches(p, productId) && matches(d, dataset));
  }

  /** The selected ids of `catalog`, in catalog order. */
  list(catalog: Catalog = BUILTIN_CATALOG): string[] {
    return catalog.entries.filter((e) => this.has(e.product.id, e.dataset.name)).map((e) => e.id);
  }

  /** The patterns that select no dataset of `catalog` (a typo, or a dataset still to come). */
  unmatched(catalog: Catalog): string[] {
    return this.patterns.filter(([p, d]) => !catalog.entries.some((e) => matches(p, e.product.id) && matches(d, e.dataset.name))).map(([p, d]) => `${p}/${d}`);
  }
}

function matches(pattern: string, value: string): boolean {
  return pattern.endsWith('*') ? value.startsWith(pattern.slice(0, -1)) : pattern === value;
}
