import { ApiError } from '../errors.js';
import type { MissingGeneration } from './data-page.js';
import { GenerationUnavailableError } from '../generations/generation-supply.js';

/**
 * A generation that could not be fetched, as the client is told (contract 12): 400
 * `generation_unavailable` for a request naming it, `cursor_expired` for a cursor pinning
 * it, 503 `dataset_unavailable` while the source is unreachable. Any other failure stays
 * a fault (500, logged).
 */
export function unavailable(missing: MissingGeneration, e: unknown): unknown {
  if (!(e instanceof GenerationUnavailableError)) return e;
  if (e.kind === 'unreachable') return new ApiError('dataset_unavailable', e.message, undefined, [['Retry-After', '30']]);
  if (missing.viaCursor)
    return new ApiError('cursor_expired', `the snapshot generation of this cursor can no longer be served (${e.message}); start the query again`, 'cursor');
  return new ApiError('generation_unavailable', e.message, 'generation');
}
