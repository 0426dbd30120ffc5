import type { ProductSpec } from '../catalog/products.js';
import { invalidParam } from '../errors.js';
import { fnv1a } from './hash.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type Query } from './query.js';
import { asOfParam, boundedInt, cursorParam, dateRange, filterCanonText, filterParams, generationParam, splitParams, type ParamRules } from './query-params.js';

const ACCEPTED = ['latest', 'date_from', 'date_to', 'limit', 'cursor', 'as_of', 'generation'];
const RULES: ParamRules = { accepted: ACCEPTED };

/**
 * `GET /{product}/{dataset}`: the raw query string (as uWS hands it over, undecoded) -> a
 * validated Query, or an ApiError naming the parameter at fault (contract 2, 3).
 */
export function parseQuery(rawQuery: string, product: ProductSpec, dataset: string): Query {
  const params = splitParams(rawQuery, product, RULES);

  const latestAt = params.indexOf('latest');
  if (latestAt >= 0 && !params.is(latestAt, 'true') && !params.is(latestAt, 'false')) {
    throw invalidParam('latest', 'latest must be true or false');
  }
  const { dateFrom, dateTo } = dateRange(params);
  const limit = boundedInt(params, 'limit', 1, MAX_LIMIT, DEFAULT_LIMIT);
  const asOfUs = asOfParam(params);
  const cursor = cursorParam(params);
  const generation = generationParam(params);
  const filters = filterParams(params, product);

  const latest = dateFrom === null && !(latestAt >= 0 && params.is(latestAt, 'false'));
  // Concatenated, not an array joined: the canonical text is the request's one string (cache key, ETag).
  const canonical =
    `${product.id}\u0001${dataset}\u0001${latest ? 'L' : 'A'}\u0001${dateFrom ?? ''}\u0001${dateTo ?? ''}\u0001${limit}` +
    `\u0001${asOfUs ?? ''}\u0001${generation ?? ''}${filterCanonText(filters)}`;
  return { latest, dateFrom, dateTo, limit, asOfUs, generation, filters, cursor, canonical, fingerprint: fnv1a(canonical) };
}
