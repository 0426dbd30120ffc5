import type { ProductSpec } from '../catalog/catalog.js';
import { invalidParam } from '../errors.js';
import { canonicalText } from './canonical-text.js';
import type { FilterClause } from './query.js';
import { asOfParam, boundedInt, cursorParam, dateToParam, filterParams, generationParam, optionalDate, splitParams, type ParamRules } from './query-params.js';

/** `GET /{product}/{dataset}/vintages` after validation (contract 11). */
export interface VintagesQuery {
  readonly dateFrom: number | null;
  readonly dateTo: number | null;
  /** only what was knowable at T (µs); null = the whole history */
  readonly asOfUs: number | null;
  /** true: each key's first release only */
  readonly firstOnly: boolean;
  readonly limit: number;
  readonly filters: readonly FilterClause[];
  /** `generation=N` (contract 12); null = the served one */
  readonly generation: number | null;
  readonly cursor: string | null;
  readonly canonical: string;
  readonly fingerprint: number;
}

export const VINTAGES_DEFAULT_LIMIT = 10_000;
export const VINTAGES_MAX_LIMIT = 100_000;

const ACCEPTED = ['date_from', 'date_to', 'as_of', 'release', 'limit', 'cursor', 'generation'];
const REFUSED = new Map([['latest', 'latest does not apply to vintages: every version some as_of picks is listed (release=first keeps the first)']]);
const RULES: ParamRules = { accepted: ACCEPTED, refused: REFUSED };

export function parseVintages(rawQuery: string, product: ProductSpec, dataset: string): VintagesQuery {
  const params = splitParams(rawQuery, product, RULES);
  const dateFrom = optionalDate(params, 'date_from');
  const dateTo = dateToParam(params, dateFrom);
  const asOfUs = asOfParam(params);
  const release = params.get('release') ?? 'all';
  if (release !== 'all' && release !== 'first') throw invalidParam('release', 'release must be all or first');
  const limit = boundedInt(params, 'limit', 1, VINTAGES_MAX_LIMIT, VINTAGES_DEFAULT_LIMIT);
  const cursor = cursorParam(params);
  const generation = generationParam(params);
  const filters = filterParams(params, product);
  const t = canonicalText
    .begin('vintages')
    .part(product.id)
    .part(dataset)
    .num(dateFrom)
    .num(dateTo)
    .num(asOfUs)
    .part(release)
    .num(limit)
    .num(generation)
    .filters(filters);
  return { dateFrom, dateTo, asOfUs, firstOnly: release === 'first', limit, filters, generation, cursor, canonical: t.take(), fingerprint: t.fingerprint };
}
