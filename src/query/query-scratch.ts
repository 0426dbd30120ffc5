import type { Mutable } from '../mutable.js';
import type { FilterClause, Query } from './query.js';

/**
 * What a serving thread parses its data requests into: one Query, and lists of filter
 * clauses, refilled by every parse that is handed this scratch (near-zero
 * allocation per request: docs/decisions.md#allocation). Like the page a request resolves into (PageScratch), they are
 * read at once, by pin and resolve, and never kept. Its canonical text is the thread's
 * CanonicalText itself (canonical-text.ts): the response cache makes a string of it only for
 * what it keeps (RequestKey.copy), and ETags and cursors keep hashes. A caller that keeps
 * queries (tests, the CLI) parses without a scratch and gets its own objects.
 */
export class QueryScratch {
  /** the rows endpoint's query (parseQuery) */
  readonly query: Mutable<Query> = {
    latest: false,
    dateFrom: null,
    dateTo: null,
    limit: 0,
    asOfUs: null,
    filters: [],
    generation: null,
    cursor: null,
    canonical: '',
    fingerprint: 0,
  };
  /** lists[n]: n clauses, the list a query with n filters gets */
  private readonly lists: Mutable<FilterClause>[][] = [];
  /** ones[n][j]: the one-value list clause j of lists[n] takes for a single value */
  private readonly ones: string[][][] = [];

  /** The thread's list of n clauses (made on first use per n: products have a handful of filters). */
  clauses(n: number): Mutable<FilterClause>[] {
    let list = this.lists[n];
    if (list === undefined) {
      list = [];
      const ones: string[][] = [];
      for (let j = 0; j < n; j++) {
        list.push({ column: '', values: [] });
        ones.push(['']);
      }
      this.lists[n] = list;
      this.ones[n] = ones;
    }
    return list;
  }

  /**
   * Clause j of lists[n] set to `column` = `values`: a list of its own, or a single value,
   * which goes into that clause's own one-value list.
   */
  set(n: number, j: number, column: string, values: readonly string[] | string): void {
    const clause = this.lists[n]![j]!;
    clause.column = column;
    if (typeof values !== 'string') {
      clause.values = values;
      return;
    }
    const one = this.ones[n]![j]!;
    one[0] = values;
    clause.values = one;
  }
}
