import type { ProductSpec } from '../catalog/catalog.js';
import { invalidParam } from '../errors.js';
import { formatDate as formatDay } from '../time/instant.js';
import { canonicalText } from './canonical-text.js';
import type { FilterClause } from './query.js';
import { dayEndUs, dayOfUs } from '../time/instant.js';
import {
  beforeFloorError,
  beforeFloorParam,
  boundedInt,
  cursorParam,
  filterParams,
  floorEndUs,
  generationParam,
  requiredDate,
  splitParams,
  type BeforeFloor,
  type ParamRules,
} from './query-params.js';

/** `GET /{product}/{dataset}/walk_forward` after validation (contract 10). */
export interface WalkForwardQuery {
  /**
   * decision dates answered: decisionFrom + i * step for i in [0, decisions), days since
   * epoch (with before_floor=skip, those from the first on or after the floor; decisions may be 0)
   */
  readonly decisionFrom: number;
  readonly decisionTo: number;
  readonly step: number;
  readonly decisions: number;
  /** each decision date D answers date_from = D - window, date_to = D, as_of = D */
  readonly window: number;
  readonly limit: number;
  /** contract 16: a decision date D < floorDay is before the vintage floor (its row's floor_applied) */
  readonly floorDay: number;
  /** some decision date asked for lies before the floor (x-floor-applied), whatever before_floor says */
  readonly floorApplied: boolean;
  readonly beforeFloor: BeforeFloor;
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

const ACCEPTED = ['decision_from', 'decision_to', 'step', 'window', 'limit', 'cursor', 'generation', 'before_floor'];
const SET_BY_DECISION = 'is set by each decision date here (date_from = D - window, date_to = D, as_of = D): use decision_from, decision_to, step and window';
const REFUSED = new Map(['as_of', 'date_from', 'date_to', 'latest'].map((p) => [p, `${p} ${SET_BY_DECISION}`]));
const RULES: ParamRules = { accepted: ACCEPTED, refused: REFUSED };

/** `floorUs`: the end of the floor day in force (contract 1); by default the product's. */
export function parseWalkForward(rawQuery: string, product: ProductSpec, dataset: string, floorUs = floorEndUs(product)): WalkForwardQuery {
  const params = splitParams(rawQuery, product, RULES);
  const decisionFrom = requiredDate(params, 'decision_from');
  const decisionTo = requiredDate(params, 'decision_to');
  if (decisionFrom > decisionTo) throw invalidParam('decision_from', 'decision_from must not be after decision_to');
  const step = boundedInt(params, 'step', 1, 366, 1);
  const window = boundedInt(params, 'window', 0, 3660, 90);
  let decisions = Math.floor((decisionTo - decisionFrom) / step) + 1;
  if (decisions > MAX_DECISIONS) {
    throw invalidParam('decision_to', `at most ${MAX_DECISIONS} decision dates per request; this range and step give ${decisions}`);
  }
  const beforeFloor = beforeFloorParam(params);
  // Before the floor means strictly before the end of its day: the floor date itself is not (contract 16).
  const floorApplied = dayEndUs(decisionFrom) < floorUs;
  const floorDay = floorUs === -Infinity ? -Infinity : dayOfUs(floorUs);
  let answeredFrom = decisionFrom;
  if (floorApplied && beforeFloor === 'error') throw beforeFloorError(product, `decision_from ${formatDay(decisionFrom)} is`, 'decision_from');
  if (floorApplied && beforeFloor === 'skip') {
    // The first decision date of the grid on or after the floor day; none may remain.
    const skipped = Math.min(decisions, Math.ceil((floorDay - decisionFrom) / step));
    answeredFrom = decisionFrom + skipped * step;
    decisions -= skipped;
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
  // Only a non-default before_floor is written: the text of every other query (and its cursors) stays as it was.
  if (beforeFloor !== 'floor') t.part(beforeFloor);
  return {
    decisionFrom: answeredFrom,
    decisionTo,
    step,
    decisions,
    window,
    limit,
    floorDay,
    floorApplied,
    beforeFloor,
    filters,
    generation,
    cursor,
    canonical: t.take(),
    fingerprint: t.fingerprint,
  };
}
