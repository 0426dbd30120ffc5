import { ApiError, invalidParam } from '../errors.js';
import type { ProductSpec } from '../catalog/products.js';
import { dayEndUs, parseDate, parseRfc3339 } from '../time/instant.js';
import { fnv1a } from './hash.js';
import { DEFAULT_LIMIT, MAX_LIMIT, type FilterClause, type Query } from './query.js';

const COMMON = new Set(['latest', 'date_from', 'date_to', 'limit', 'cursor', 'as_of']);

/**
 * The raw query string (as uWS hands it over, undecoded) -> a validated Query, or an
 * ApiError naming the parameter at fault. The only place query text is interpreted.
 */
export function parseQuery(rawQuery: string, product: ProductSpec, dataset: string): Query {
  const params = splitQuery(rawQuery, product);

  const latestText = params.get('latest');
  if (latestText !== undefined && latestText !== 'true' && latestText !== 'false') {
    throw invalidParam('latest', 'latest must be true or false');
  }
  const dateFrom = optionalDate(params, 'date_from');
  const dateTo = optionalDate(params, 'date_to');
  if (dateFrom !== null && dateTo !== null && dateFrom > dateTo) {
    throw invalidParam('date_from', 'date_from must not be after date_to');
  }

  let limit = DEFAULT_LIMIT;
  const limitText = params.get('limit');
  if (limitText !== undefined) {
    if (!/^[0-9]{1,6}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) {
      throw invalidParam('limit', `limit must be an integer from 1 to ${MAX_LIMIT}`);
    }
    limit = Number(limitText);
  }

  let asOfUs: number | null = null;
  const asOfText = params.get('as_of');
  if (asOfText !== undefined) {
    const day = parseDate(asOfText);
    asOfUs = day !== null ? dayEndUs(day) : parseRfc3339(asOfText);
    if (asOfUs === null) {
      // A raw '+' in a query string means a space: the usual way an offset gets lost.
      const hint = asOfText.includes(' ') ? " (a '+' in a URL query reads as a space: encode the offset sign as %2B)" : '';
      throw invalidParam('as_of', `as_of must be a date YYYY-MM-DD or an RFC 3339 timestamp with Z or an offset${hint}`);
    }
  }

  const cursor = params.get('cursor') ?? null;
  if (cursor === '') throw invalidParam('cursor', 'cursor must not be empty');

  const filters: FilterClause[] = [];
  for (const f of product.filters) {
    const text = params.get(f.param);
    if (text === undefined) continue;
    const values = [...new Set(text.split(','))];
    if (values.some((v) => v === '')) throw invalidParam(f.param, `${f.param} must be a value or a comma-separated list of values`);
    if (f.allowed !== null) {
      const bad = values.find((v) => !f.allowed!.includes(v));
      if (bad !== undefined) throw invalidParam(f.param, `${f.param} must be one of ${f.allowed.join(', ')}`);
    }
    filters.push({ column: f.param, values: values.sort() });
  }

  const latest = dateFrom === null && latestText !== 'false';
  const canonical = [
    product.id,
    dataset,
    latest ? 'L' : 'A',
    dateFrom ?? '',
    dateTo ?? '',
    limit,
    asOfUs ?? '',
    ...filters.map((f) => `${f.column}=${f.values.join('\u0000')}`),
  ].join('\u0001');
  return { latest, dateFrom, dateTo, limit, asOfUs, filters, cursor, canonical, fingerprint: fnv1a(canonical) };
}

function splitQuery(raw: string, product: ProductSpec): Map<string, string> {
  const params = new Map<string, string>();
  if (raw === '') return params;
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const rawValue = eq < 0 ? '' : part.slice(eq + 1);
    const key = decode(rawKey, rawKey);
    const value = decode(rawValue, key);
    if (!COMMON.has(key) && !product.filters.some((f) => f.param === key)) {
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

function optionalDate(params: Map<string, string>, name: string): number | null {
  const text = params.get(name);
  if (text === undefined) return null;
  const day = parseDate(text);
  if (day === null) throw invalidParam(name, `${name} must be a date YYYY-MM-DD`);
  return day;
}
