import type { ProductSpec } from '../catalog/catalog.js';
import { invalidParam } from '../errors.js';
import { canonicalText } from './canonical-text.js';
import type { QueryScratch } from './query-scratch.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type Query } from './query.js';
import { asOfParam, boundedInt, cursorParam, dateToParam, filterParams, generationParam, optionalDate, splitParams, type ParamRules } from './query-params.js';

const ACCEPTED = ['latest', 'date_from', 'date_to', 'limit', 'cursor', 'as_of', 'generation'];
const RULES: ParamRules = { accepted: ACCEPTED };

/**
 * `GET /{product}/{dataset}`: the raw query string (as uWS hands it over, undecoded) -> a
 * validated Query, or an ApiError naming the parameter at fault (contract 2, 3). With a
 * scratch (a serving thread's), the Query and its filters are the scratch's, refilled by
 * the next parse; without one, they are the caller's own.
 */
export function parseQuery(rawQuery: string, product: ProductSpec, dataset: string, scratch: QueryScratch | null = null): Query {
  const params = splitParams(rawQuery, product, RULES);

  const latestAt = params.indexOf('latest');
  if (latestAt >= 0 && !params.is(latestAt, 'true') && !params.is(latestAt, 'false')) {
    throw invalidParam('latest', 'latest must be true or false');
  }
  const dateFrom = optionalDate(params, 'date_from');
  const dateTo = dateToParam(params, dateFrom);
  const limit = boundedInt(params, 'limit', 1, MAX_LIMIT, DEFAULT_LIMIT);
  const asOfUs = asOfParam(params);
  const cursor = cursorParam(params);
  const generation = generationParam(params);
  const filters = filterParams(params, product, scratch);

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
  if (scratch === null) return { latest, dateFrom, dateTo, limit, asOfUs, generation, filters, cursor, canonical: t.take(), fingerprint: t.fingerprint };
  const q = scratch.query;
  q.latest = latest;
  q.dateFrom = dateFrom;
  q.dateTo = dateTo;
  q.limit = limit;
  q.asOfUs = asOfUs;
  q.generation = generation;
  q.filters = filters;
  q.cursor = cursor;
  // The thread's text itself, read like the scratch before the next parse (CanonicalForm).
  q.canonical = t;
  q.fingerprint = t.fingerprint;
  return q;
}
