import type { ProductSpec } from '../catalog/products.js';
import { invalidParam } from '../errors.js';
import { canonicalText } from './canonical-text.js';
import type { FilterClause } from './query.js';
import { boundedInt, cursorParam, filterParams, generationParam, requiredDate, splitParams, type ParamRules } from './query-params.js';

/** `GET /{product}/{dataset}/walk_forward` after validation (contract 10). */
export interface WalkForwardQuery {
  /** decision dates: decisionFrom + i * step for i in [0, decisions), days since epoch */
  readonly decisionFrom: number;
  readonly decisionTo: number;
  readonly step: number;
  readonly decisions: number;
  /** each decision date D answers date_from = D - window, date_to = D, as_of = D */
  readonly window: number;
  readonly limit: number;
  readonly filters: readonly FilterClause[];
  /** `generation=N` (contract 12); null = the served one */
  readonly generation: number | null;
  readonly cursor: string | null;
  readonly canonical: string;
  readonly fingerprint: number;
}

export const WALK_FORWARD_DEFAULT_LIMIT = 10_000;
export const WALK_FORWARD_MAX_LIMIT = 100_000;
export const MAX_DECISIONS = 10_000;

const ACCEPTED = ['decision_from', 'decision_to', 'step', 'window', 'limit', 'cursor', 'generation'];
const SET_BY_DECISION = 'is set by each decision date here (date_from = D - window, date_to = D, as_of = D): use decision_from, decision_to, step and window';
const REFUSED = new Map(['as_of', 'date_from', 'date_to', 'latest'].map((p) => [p, `${p} ${SET_BY_DECISION}`]));
const RULES: ParamRules = { accepted: ACCEPTED, refused: REFUSED };

export function parseWalkForward(rawQuery: string, product: ProductSpec, dataset: string): WalkForwardQuery {
  const params = splitParams(rawQuery, product, RULES);
  const decisionFrom = requiredDate(params, 'decision_from');
  const decisionTo = requiredDate(params, 'decision_to');
  if (decisionFrom > decisionTo) throw invalidParam('decision_from', 'decision_from must not be after decision_to');
  const step = boundedInt(params, 'step', 1, 366, 1);
  const window = boundedInt(params, 'window', 0, 3660, 90);
  const decisions = Math.floor((decisionTo - decisionFrom) / step) + 1;
  if (decisions > MAX_DECISIONS) {
    throw invalidParam('decision_to', `at most ${MAX_DECISIONS} decision dates per request; this range and step give ${decisions}`);
  }
  const limit = boundedInt(params, 'limit', 1, WALK_FORWARD_MAX_LIMIT, WALK_FORWARD_DEFAULT_LIMIT);
  const cursor = cursorParam(params);
  const generation = generationParam(params);
  const filters = filterParams(params, product);
  const t = canonicalText
    .begin('walk_forward')
    .part(product.id)
    .part(dataset)
    .num(decisionFrom)
    .num(decisionTo)
    .num(step)
    .num(window)
    .num(limit)
    .num(generation)
    .filters(filters);
  return { decisionFrom, decisionTo, step, decisions, window, limit, filters, generation, cursor, canonical: t.take(), fingerprint: t.fingerprint };
}
