import type { ProductSpec } from '../catalog/catalog.js';
import { boundedInt, beforeFloorParam, generationParam, splitParams, type BeforeFloor, type ParamRules } from '../query/query-params.js';

/** `POST /{product}/{dataset}/asof_join`'s query (contract 15), `format` and `columns` aside (presentation.ts). */
export interface JoinQuery {
  /** days, or null: any age */
  readonly maxAgeDays: number | null;
  readonly beforeFloor: BeforeFloor;
  readonly generation: number | null;
}

const RULES: ParamRules = { accepted: ['max_age', 'before_floor', 'generation'] };

/** Nothing but columns, format, max_age, before_floor and generation: a filter or any other parameter is a 400 unknown_parameter. */
export function parseJoinQuery(rawQuery: string, product: ProductSpec): JoinQuery {
  // Events name their own series: the product's filters are not parameters here.
  const params = splitParams(rawQuery, { ...product, filters: [] }, RULES);
  const maxAgeDays = params.has('max_age') ? boundedInt(params, 'max_age', 0, 36_600, 0) : null;
  return { maxAgeDays, beforeFloor: beforeFloorParam(params), generation: generationParam(params) };
}
