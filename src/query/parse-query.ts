import type { ProductSpec } from '../catalog/products.js';
import { invalidParam } from '../errors.js';
import { canonicalText } from './canonical-text.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type Query } from './query.js';
import { asOfParam, boundedInt, cursorParam, dateRange, filterParams, generationParam, splitParams, type ParamRules } from './query-params.js';

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
  const t = canonicalText
    .begin(product.id)
    .part(dataset)
    .part(latest ? 'L' : 'A')
    .num(dateFrom)
    .num(dateTo)
    .num(limit)
    .num(asOfUs)
    .num(generation)
    .filters(filters);
  return { latest, dateFrom, dateTo, limit, asOfUs, generation, filters, cursor, canonical: t.take(), fingerprint: t.fingerprint };
}
