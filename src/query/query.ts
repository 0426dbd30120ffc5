import type { CanonicalForm } from './canonical-text.js';

/** A data request after validation at the boundary: everything downstream trusts it. */
export interface FilterClause {
  /** the series-key column (same name as the query parameter) */
  readonly column: string;
  /** distinct accepted values ("any of these") */
  readonly values: readonly string[];
}

export interface Query {
  /** true: one row per series (contract 2). Always false when dateFrom is given. */
  readonly latest: boolean;
  /** days since epoch, inclusive */
  readonly dateFrom: number | null;
  readonly dateTo: number | null;
  readonly limit: number;
  /** the `as_of` instant T in µs, or null for no time filter */
  readonly asOfUs: number | null;
  readonly filters: readonly FilterClause[];
  /** `generation=N` (contract 12): answer from generation N; null = the served one */
  readonly generation: number | null;
  /** the raw cursor token, decoded against a generation later */
  readonly cursor: string | null;
  /** the dataset and every parameter but `cursor`, normalised: equal for equivalent queries (a string, but the thread's text in a scratch's query) */
  readonly canonical: CanonicalForm;
  /** hash of `canonical`: a cursor only fits the query it came from */
  readonly fingerprint: number;
}

export const DEFAULT_LIMIT = 200;
export const MAX_LIMIT = 10_000;
