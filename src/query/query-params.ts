import { floorUsOf, type FilterSpec, type ProductSpec } from '../catalog/catalog.js';
import { ApiError, invalidParam } from '../errors.js';
import { asciiDigits, dayEndUs, parseDate, parseRfc3339 } from '../time/instant.js';
import type { FilterClause } from './query.js';
import type { QueryScratch } from './query-scratch.js';

/**
 * The pieces every data endpoint's parameter parser is made of (contract 2, 3, 10, 11):
 * the query string split and decoded once, then each parameter checked by one function
 * that throws the contract's 400 naming it. Only the endpoints' parsers call these.
 */
export interface ParamRules {
  /** the endpoint's own parameters (the product's filters are always accepted) */
  readonly accepted: readonly string[];
  /** parameters of another endpoint that this one refuses, with why (a 400 invalid_parameter naming it) */
  readonly refused?: ReadonlyMap<string, string>;
}

/**
 * The query string scanned once: for each parameter given, the string its value lies in
 * and where: the raw query string, or the decoded text when it was percent-encoded. Dates
 * and integers are read where they lie, so a request makes no string per parameter
 * (near-zero allocation per request: docs/decisions.md#allocation); `text` slices one out for the few that
 * need a string.
 *
 * One per thread, reused by every scan (splitParams): a Params is read by the parser that
 * asked for it before anything else scans, and never kept.
 */
export class Params {
  /** the names given, in order: an accepted name's own string, or the decoded key */
  private readonly names: string[] = [];
  /** the value of parameter i is texts[i][starts[i]..ends[i]) */
  private readonly texts: string[] = [];
  private readonly starts: number[] = [];
  private readonly ends: number[] = [];
  private n = 0;

  reset(): void {
    this.n = 0;
  }

  add(name: string, text: string, start: number, end: number): void {
    const i = this.n++;
    this.names[i] = name;
    this.texts[i] = text;
    this.starts[i] = start;
    this.ends[i] = end;
  }

  /** The index of parameter `name`, or -1 when it is not given. */
  indexOf(name: string): number {
    for (let i = 0; i < this.n; i++) if (this.names[i] === name) return i;
    return -1;
  }

  has(name: string): boolean {
    return this.indexOf(name) >= 0;
  }

  /** Parameter `name`'s value as a string, or undefined when it is not given. */
  get(name: string): string | undefined {
    const i = this.indexOf(name);
    return i < 0 ? undefined : this.text(i);
  }

  text(i: number): string {
    return this.texts[i]!.slice(this.starts[i], this.ends[i]);
  }

  /** Whether parameter i's value is exactly `s`. */
  is(i: number, s: string): boolean {
    return this.ends[i]! - this.starts[i]! === s.length && this.texts[i]!.startsWith(s, this.starts[i]);
  }

  /** Parameter i as a YYYY-MM-DD date (days since epoch), or null when it is not one. */
  date(i: number): number | null {
    return parseDate(this.texts[i]!, this.starts[i], this.ends[i]);
  }

  /** Parameter i as 1 to maxDigits ASCII digits, or -1 when it is not that. */
  digits(i: number, maxDigits: number): number {
    const n = this.ends[i]! - this.starts[i]!;
    return n < 1 || n > maxDigits ? -1 : asciiDigits(this.texts[i]!, this.starts[i]!, n);
  }
}

/** The one Params of this thread (see Params). */
const scratch = new Params();

/** The raw query string (undecoded) -> its parameters; an unknown or repeated one is a 400 naming it. */
export function splitParams(raw: string, product: ProductSpec, rules: ParamRules): Params {
  const params = scratch;
  params.reset();
  const n = raw.length;
  let at = 0;
  while (at < n) {
    let end = raw.indexOf('&', at);
    if (end < 0) end = n;
    if (end > at) {
      let eq = raw.indexOf('=', at);
      if (eq < 0 || eq > end) eq = end;
      const valueStart = eq < end ? eq + 1 : end;
      // Checked in this order (key, no name, value, name, repeat), so the first error is as it was.
      const known = encoded(raw, at, eq) ? null : acceptedName(raw, at, eq, product, rules);
      const rawKey = known === null ? raw.slice(at, eq) : known;
      const name = known ?? decode(rawKey, rawKey);
      // A pair with no name ("=5", "=%zz") is at fault, but names no parameter the error could name.
      if (name === '') throw new ApiError('unknown_parameter', `a parameter without a name: "${raw.slice(at, end)}"`);
      const value = encoded(raw, valueStart, end) ? decode(raw.slice(valueStart, end), name) : null;
      if (known === null && !rules.accepted.includes(name) && !product.filters.some((f) => f.param === name)) {
        const why = rules.refused?.get(name);
        if (why !== undefined) throw invalidParam(name, why);
        throw new ApiError('unknown_parameter', `unknown parameter "${name}" for product ${product.id}`, name);
      }
      if (params.has(name)) throw invalidParam(name, `${name} is given more than once`);
      if (value === null) params.add(name, raw, valueStart, end);
      else params.add(name, value, 0, value.length);
    }
    at = end + 1;
  }
  return params;
}

/** The accepted name that raw[start..end) spells, as that name's own string (nothing sliced), or null. */
function acceptedName(raw: string, start: number, end: number, product: ProductSpec, rules: ParamRules): string | null {
  const len = end - start;
  for (const name of rules.accepted) if (name.length === len && raw.startsWith(name, start)) return name;
  for (const f of product.filters) if (f.param.length === len && raw.startsWith(f.param, start)) return f.param;
  return null;
}

/** Whether raw[start..end) has '%' or '+' (then it must be decoded). */
function encoded(raw: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x25 || c === 0x2b) return true;
  }
  return false;
}

/** A percent-encoded key or value (splitParams calls it only for those, and for unknown keys). */
function decode(text: string, param: string): string {
  try {
    return decodeURIComponent(text.includes('+') ? text.replace(/\+/g, ' ') : text);
  } catch {
    throw invalidParam(param, `malformed percent-encoding in ${param}`);
  }
}

/** A `YYYY-MM-DD` parameter as days since epoch; null when absent. */
export function optionalDate(params: Params, name: string): number | null {
  const i = params.indexOf(name);
  if (i < 0) return null;
  const day = params.date(i);
  if (day === null) throw invalidParam(name, `${name} must be a date YYYY-MM-DD`);
  return day;
}

export function requiredDate(params: Params, name: string): number {
  const day = optionalDate(params, name);
  if (day === null) throw invalidParam(name, `${name} is required (a date YYYY-MM-DD)`);
  return day;
}

/**
 * `date_to`, read after `date_from` (both optional, inclusive): from > to is a 400 naming
 * date_from. Two reads, not one returning a pair: a data request makes no object for its dates.
 */
export function dateToParam(params: Params, dateFrom: number | null): number | null {
  const dateTo = optionalDate(params, 'date_to');
  if (dateFrom !== null && dateTo !== null && dateFrom > dateTo) throw invalidParam('date_from', 'date_from must not be after date_to');
  return dateTo;
}

/** An integer parameter in [min, max], or `fallback` when absent. */
export function boundedInt(params: Params, name: string, min: number, max: number, fallback: number): number {
  const i = params.indexOf(name);
  if (i < 0) return fallback;
  const v = params.digits(i, 7);
  if (v < 0 || v < min || v > max) throw invalidParam(name, `${name} must be an integer from ${min} to ${max}`);
  return v;
}

/** `as_of` as the instant T in µs (contract 1), or null when absent. */
export function asOfParam(params: Params): number | null {
  const i = params.indexOf('as_of');
  if (i < 0) return null;
  const day = params.date(i);
  if (day !== null) return dayEndUs(day);
  const text = params.text(i);
  const us = parseRfc3339(text);
  if (us !== null) return us;
  // A raw '+' in a query string means a space: the usual way an offset gets lost.
  const hint = text.includes(' ') ? " (a '+' in a URL query reads as a space: encode the offset sign as %2B)" : '';
  throw invalidParam('as_of', `as_of must be a date YYYY-MM-DD or an RFC 3339 timestamp with Z or an offset${hint}`);
}

/** `generation` (contract 12): the snapshot generation to answer from, or null for the served one. */
export function generationParam(params: Params): number | null {
  const i = params.indexOf('generation');
  if (i < 0) return null;
  const v = params.digits(i, 10);
  if (v < 0 || v > 0xffff_ffff) throw invalidParam('generation', 'generation must be a generation number (an integer from 0 to 4294967295)');
  return v;
}

/** What a walk-forward or join does with decision dates or events before the vintage floor (contract 16). */
export type BeforeFloor = 'floor' | 'skip' | 'error';

/** `before_floor` = floor (default) | skip | error. */
export function beforeFloorParam(params: Params): BeforeFloor {
  const i = params.indexOf('before_floor');
  if (i < 0 || params.is(i, 'floor')) return 'floor';
  if (params.is(i, 'skip')) return 'skip';
  if (params.is(i, 'error')) return 'error';
  throw invalidParam('before_floor', 'before_floor must be floor, skip or error');
}

/** The end of the product's vintage-floor day (µs, contract 1): an instant before it is "before the floor" (contract 16). */
export function floorEndUs(product: ProductSpec): number {
  return floorUsOf(product.floor);
}

/** 400 `before_floor` (contract 16): `what` lies before the product's vintage floor. */
export function beforeFloorError(product: ProductSpec, what: string, param?: string): ApiError {
  return new ApiError(
    'before_floor',
    `${what} before the vintage floor of ${product.id} (${product.floor ?? 'none'}): what was known then cannot be reconstructed (before_floor=error; floor answers the state held at the floor, skip leaves them out)`,
    param,
  );
}

export function cursorParam(params: Params): string | null {
  const cursor = params.get('cursor') ?? null;
  if (cursor === '') throw invalidParam('cursor', 'cursor must not be empty');
  return cursor;
}

/** No filter given: one shared empty list. */
const NO_FILTERS: readonly FilterClause[] = Object.freeze([]);

/**
 * The product's filters present in the query (contract 3), values distinct and sorted.
 * Loops, not some/find with closures, no sort of a single value (V8's sort allocates its
 * work array whatever the length), and the list made at its final length (a push past a
 * literal's length reserves 17 more slots). With a scratch (a serving thread's), the list
 * and clauses are the thread's own and a filter costs only its value's string (docs/decisions.md#allocation:
 * near-zero allocation per request).
 */
export function filterParams(params: Params, product: ProductSpec, scratch: QueryScratch | null = null): readonly FilterClause[] {
  const specs = product.filters;
  let given = 0;
  for (let k = 0; k < specs.length; k++) if (params.indexOf(specs[k]!.param) >= 0) given++;
  if (given === 0) return NO_FILTERS;
  const filters: FilterClause[] = scratch === null ? new Array<FilterClause>(given) : scratch.clauses(given);
  let n = 0;
  for (let k = 0; k < specs.length; k++) {
    const f = specs[k]!;
    const text = params.get(f.param);
    if (text === undefined) continue;
    // A list: distinct and sorted; a single value stays a string (no list made for it with a scratch).
    const values = text.includes(',') ? [...new Set(text.split(','))].sort() : text;
    if (typeof values === 'string') {
      if (values === '') throw emptyValue(f);
      checkAllowed(f, values);
    } else {
      // An empty value is named first, whatever else is wrong.
      for (let i = 0; i < values.length; i++) if (values[i] === '') throw emptyValue(f);
      for (let i = 0; i < values.length; i++) checkAllowed(f, values[i]!);
    }
    if (scratch !== null) scratch.set(given, n, f.param, values);
    else filters[n] = { column: f.param, values: typeof values === 'string' ? [values] : values };
    n++;
  }
  return filters;
}

function emptyValue(f: FilterSpec): ApiError {
  return invalidParam(f.param, `${f.param} must be a value or a comma-separated list of values`);
}

function checkAllowed(f: FilterSpec, value: string): void {
  if (f.allowed !== null && !f.allowed.includes(value)) throw invalidParam(f.param, `${f.param} must be one of ${f.allowed.join(', ')}`);
}
