import type { RawRequest } from '../raw-http.js';

/** What the fuzz generator draws from and what it makes (requests.ts). */

/** One dataset as the running server shows it. */
export interface FuzzDataset {
  readonly productId: string;
  readonly dataset: string;
  /** every column of its answers */
  readonly columns: readonly string[];
  /** filter parameter -> values that exist */
  readonly filters: ReadonlyMap<string, readonly string[]>;
}

/** A real page chain: the request that answered with `cursor`, which is valid with exactly that query. */
export interface CursorSample {
  /** path of the endpoint */
  readonly path: string;
  /** the query it came from, in order, without the cursor */
  readonly query: ReadonlyArray<readonly [string, string]>;
  readonly cursor: string;
}

/** What the generator draws from: the server's endpoints, datasets, real cursors, ETags and keys. */
export interface FuzzWorld {
  /** endpoint suffixes after `/{product}/{dataset}` ('' for the plain query), with their query parameters */
  readonly dataEndpoints: ReadonlyArray<{ readonly suffix: string; readonly params: readonly string[] }>;
  /** every other path of the API, with its method */
  readonly fixedPaths: ReadonlyArray<{ readonly path: string; readonly method: string }>;
  readonly headerParams: readonly string[];
  readonly datasets: readonly FuzzDataset[];
  readonly cursors: readonly CursorSample[];
  readonly etags: readonly string[];
  /** keys: [the all-products key, others (a limited one, an admin one)] */
  readonly keys: { readonly main: string; readonly others: readonly string[] };
}

/** A generated case: the request, and for a cursor case what the oracle may expect of it. */
export interface FuzzCase {
  readonly request: RawRequest;
  /** set when the only change from a valid chain request is the cursor's bytes */
  readonly cursor?: { readonly original: string; readonly sent: string };
  /** how the case was made, for the findings' tally */
  readonly kind: string;
}
