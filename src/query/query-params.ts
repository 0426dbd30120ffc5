import type { ProductSpec } from '../catalog/products.js';
import { ApiError, invalidParam } from '../errors.js';
import { dayEndUs, parseDate, parseRfc3339 } from '../time/instant.js';
import type { FilterClause } from './query.js';

/**
 * The pieces every data endpoint's parameter parser is made of (contract 2, 3, 10, 11):
 * the query string split and decoded once, then each parameter checked by one function
 * that throws the contract's 400 naming it. Only the endpoints' parsers call these.
 */
export type Params = ReadonlyMap<string, string>;

export interface ParamRules {
  /** the endpoint's own parameters (the product's filters are always accepted) */
  readonly accepted: ReadonlySet<string>;
  /** parameters of another endpoint that this one refuses, with why (a 400 invalid_parameter naming it) */
  readonly refused?: ReadonlyMap<string, string>;
}

/** The raw query string (undecoded) -> decoded parameters; an unknown or repeated one is a 400 naming it. */
export function splitParams(raw: string, product: ProductSpec, rules: ParamRules): Params {
  const params = new Map<string, string>();
  if (raw === '') return params;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    const key = decode(rawKey, rawKey);
    const value = decode(rawValue, key);
    if (!rules.accepted.has(key) && !product.filters.some((f) => f.param === key)) {
      const why = rules.refused?.get(key);
      if (why !== undefined) throw invalidParam(key, why);
      throw new ApiError('unknown_parameter', `unknown parameter "${key}" for product ${product.id}`, key);
    }
    if (params.has(key)) throw invalidParam(key, `${key} is given more than once`);
    params.set(key, value);
  }
  return params;
}

function decode(text: string, param: string): string {
  // Most parameters carry nothing encoded: skip the decoder (and its string copy) for them.
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.includes('+') ? text.replace(/\+/g, ' ') : text);
  } catch {
    throw invalidParam(param, `malformed percent-encoding in ${param}`);
  }
}

/** A `YYYY-MM-DD` parameter as days since epoch; null when absent. */
export function optionalDate(params: Params, name: string): number | null {
  const text = params.get(name);
  if (text === undefined) return null;
  const day = parseDate(text);
  if (day === null) throw invalidParam(name, `${name} must be a date YYYY-MM-DD`);
  return day;
}

export function requiredDate(params: Params, name: string): number {
  const day = optionalDate(params, name);
  if (day === null) throw invalidParam(name, `${name} is required (a date YYYY-MM-DD)`);
  return day;
}

/** `date_from` and `date_to` (both optional, inclusive); from > to is a 400. */
export function dateRange(params: Params): { dateFrom: number | null; dateTo: number | null } {
  const dateFrom = optionalDate(params, 'date_from');
  const dateTo = optionalDate(params, 'date_to');
  if (dateFrom !== null && dateTo !== null && dateFrom > dateTo) throw invalidParam('date_from', 'date_from must not be after date_to');
  return { dateFrom, dateTo };
}

/** An integer parameter in [min, max], or `fallback` when absent. */
export function boundedInt(params: Params, name: string, min: number, max: number, fallback: number): number {
  const text = params.get(name);
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,7}$/.test(text) || Number(text) < min || Number(text) > max) throw invalidParam(name, `${name} must be an integer from ${min} to ${max}`);
  return Number(text);
}

/** `as_of` as the instant T in µs (contract 1), or null when absent. */
export function asOfParam(params: Params): number | null {
  const text = params.get('as_of');
  if (text === undefined) return null;
  const day = parseDate(text);
  const us = day !== null ? dayEndUs(day) : parseRfc3339(text);
  if (us !== null) return us;
  // A raw '+' in a query string means a space: the usual way an offset gets lost.
  const hint = text.includes(' ') ? " (a '+' in a URL query reads as a space: encode the offset sign as %2B)" : '';
  throw invalidParam('as_of', `as_of must be a date YYYY-MM-DD or an RFC 3339 timestamp with Z or an offset${hint}`);
}

/** `generation` (contract 12): the snapshot generation to answer from, or null for the served one. */
export function generationParam(params: Params): number | null {
  const text = params.get('generation');
  if (text === undefined) return null;
  if (!/^[0-9]{1,10}$/.test(text) || Number(text) > 0xffff_ffff)
    throw invalidParam('generation', 'generation must be a generation number (an integer from 0 to 4294967295)');
  return Number(text);
}

export function cursorParam(params: Params): string | null {
  const cursor = params.get('cursor') ?? null;
  if (cursor === '') throw invalidParam('cursor', 'cursor must not be empty');
  return cursor;
}

/** The product's filters present in the query (contract 3), values distinct and sorted. */
export function filterParams(params: Params, product: ProductSpec): FilterClause[] {
  const filters: FilterClause[] = [];
  for (const f of product.filters) {
    const text = params.get(f.param);
    if (text === undefined) continue;
    // One value (the common case) needs no de-duplication.
    const values = text.includes(',') ? [...new Set(text.split(','))] : [text];
    if (values.some((v) => v === '')) throw invalidParam(f.param, `${f.param} must be a value or a comma-separated list of values`);
    if (f.allowed !== null) {
      const bad = values.find((v) => !f.allowed!.includes(v));
      if (bad !== undefined) throw invalidParam(f.param, `${f.param} must be one of ${f.allowed.join(', ')}`);
    }
    filters.push({ column: f.param, values: values.sort() });
  }
  return filters;
}

/** The filters' part of a canonical query text, its tail: `\u0001column=v1\u0000v2` per filter (`''` without filters). */
export function filterCanonText(filters: readonly FilterClause[]): string {
  let text = '';
  for (const f of filters) text += `\u0001${f.column}=${f.values.join('\u0000')}`;
  return text;
}
