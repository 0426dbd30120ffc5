import { describe, expect, it } from 'vitest';
import { findProduct, type ProductSpec } from '../src/catalog/products.js';
import { ApiError } from '../src/errors.js';
import { parseQuery } from '../src/query/parse-query.js';
import { parseVintages } from '../src/query/parse-vintages.js';
import { parseWalkForward } from '../src/query/parse-walk-forward.js';
import { splitParams } from '../src/query/query-params.js';
import { dayEndUs, parseDate, parseRfc3339 } from '../src/time/instant.js';

/**
 * The definition the parameter scanner implements without making a string per parameter:
 * split on '&', then '=', decode key and value ('+' is a space), refuse an unknown or
 * refused key, then a repeated one, in that order per parameter; integers are 1-7 (or
 * 1-10) ASCII digits, dates strict YYYY-MM-DD. parseQuery's answer (or its 400) must be
 * what these give.
 */
function referenceParams(raw: string, product: ProductSpec, accepted: readonly string[], refused?: ReadonlyMap<string, string>): Map<string, string> {
  const params = new Map<string, string>();
  if (raw === '') return params;
  const decode = (text: string, param: string): string => {
    try {
      return decodeURIComponent(text.replace(/\+/g, ' '));
    } catch {
      throw new ApiError('invalid_parameter', `malformed percent-encoding in ${param}`, param);
    }
  };
  for (const part of raw.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawKey = eq < 0 ? part : part.slice(0, eq);
    const key = decode(rawKey, rawKey);
    if (key === '') throw new ApiError('unknown_parameter', `a parameter without a name: "${part}"`);
    const value = decode(eq < 0 ? '' : part.slice(eq + 1), key);
    if (!accepted.includes(key) && !product.filters.some((f) => f.param === key)) {
      const why = refused?.get(key);
      if (why !== undefined) throw new ApiError('invalid_parameter', why, key);
      throw new ApiError('unknown_parameter', `unknown parameter "${key}" for product ${product.id}`, key);
    }
    if (params.has(key)) throw new ApiError('invalid_parameter', `${key} is given more than once`, key);
    params.set(key, value);
  }
  return params;
}

const bad = (param: string, message: string): ApiError => new ApiError('invalid_parameter', message, param);

function referenceQuery(raw: string, product: ProductSpec, dataset: string): unknown {
  const p = referenceParams(raw, product, ['latest', 'date_from', 'date_to', 'limit', 'cursor', 'as_of', 'generation']);
  const latestText = p.get('latest');
  if (latestText !== undefined && latestText !== 'true' && latestText !== 'false') throw bad('latest', 'latest must be true or false');
  const date = (name: string): number | null => {
    const text = p.get(name);
    if (text === undefined) return null;
    const day = parseDate(text);
    if (day === null) throw bad(name, `${name} must be a date YYYY-MM-DD`);
    return day;
  };
  const dateFrom = date('date_from');
  const dateTo = date('date_to');
  if (dateFrom !== null && dateTo !== null && dateFrom > dateTo) throw bad('date_from', 'date_from must not be after date_to');
  const limitText = p.get('limit');
  if (limitText !== undefined && (!/^[0-9]{1,7}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > 10_000))
    throw bad('limit', 'limit must be an integer from 1 to 10000');
  const limit = limitText === undefined ? 200 : Number(limitText);
  const asOfText = p.get('as_of');
  let asOfUs: number | null = null;
  if (asOfText !== undefined) {
    const day = parseDate(asOfText);
    asOfUs = day !== null ? dayEndUs(day) : parseRfc3339(asOfText);
    if (asOfUs === null) {
      const hint = asOfText.includes(' ') ? " (a '+' in a URL query reads as a space: encode the offset sign as %2B)" : '';
      throw bad('as_of', `as_of must be a date YYYY-MM-DD or an RFC 3339 timestamp with Z or an offset${hint}`);
    }
  }
  const cursor = p.get('cursor') ?? null;
  if (cursor === '') throw bad('cursor', 'cursor must not be empty');
  const genText = p.get('generation');
  if (genText !== undefined && (!/^[0-9]{1,10}$/.test(genText) || Number(genText) > 0xffff_ffff))
    throw bad('generation', 'generation must be a generation number (an integer from 0 to 4294967295)');
  const generation = genText === undefined ? null : Number(genText);
  const filters = [];
  for (const f of product.filters) {
    const text = p.get(f.param);
    if (text === undefined) continue;
    const values = [...new Set(text.split(','))];
    if (values.some((v) => v === '')) throw bad(f.param, `${f.param} must be a value or a comma-separated list of values`);
    if (f.allowed !== null && values.some((v) => !f.allowed!.includes(v))) throw bad(f.param, `${f.param} must be one of ${f.allowed.join(', ')}`);
    filters.push({ column: f.param, values: values.sort() });
  }
  const latest = dateFrom === null && latestText !== 'false';
  const canonical =
    [product.id, dataset, latest ? 'L' : 'A', dateFrom ?? '', dateTo ?? '', limit, asOfUs ?? '', generation ?? ''].join('\u0001') +
    filters.map((f) => `\u0001${f.column}=${f.values.join('\u0000')}`).join('');
  return { latest, dateFrom, dateTo, limit, asOfUs, generation, filters, cursor, canonical };
}

/** parse's answer without the fingerprint (a hash of canonical), or its error as data. */
function outcome(parse: () => object): unknown {
  try {
    const { fingerprint: _, ...rest } = parse() as { fingerprint: number };
    return rest;
  } catch (e) {
    if (!(e instanceof ApiError)) throw e;
    return { code: e.code, message: e.message, param: e.param };
  }
}

describe('query parameters, scanned where they lie in the query string', () => {
  const gbsi = findProduct('gbsi_eu')!;
  const glmi = findProduct('glmi')!;
  const wssi = findProduct('wssi_us')!;

  it('agrees with the split-and-decode definition on random queries: the same Query, or the same 400', () => {
    // Pieces of parameters, valid and not: encoded keys and values, '+', bare names, empty parts.
    const pieces = [
      'date_from=2024-01-01',
      'date_from=2024-05-01',
      'date_from=2024-02-30',
      'date_to=2024-01-01',
      'date_to=2024-03-31',
      'date%5Fto=2024-03-01',
      'date_to=2024-03-0%31',
      'as_of=2024-02-15',
      'as_of=2024-02-15T10:00:00Z',
      'as_of=2024-02-15T10:00:00+01:00',
      'as_of=2024-02-15T10:00:00%2B01:00',
      'as_of=yesterday',
      'limit=50',
      'limit=1',
      'limit=2x',
      'limit=1/',
      'limit=0',
      'limit=10000',
      'limit=10001',
      'limit=12345678',
      'limit=',
      'limit=5%30',
      'limit=-5',
      'latest=true',
      'latest=false',
      'latest=fals%65',
      'latest=yes',
      'latest=truest',
      'latest',
      'generation=3',
      'generation=0',
      'generation=',
      'generation=1:',
      'generation=4294967295',
      'generation=4294967296',
      'generation=99999999999',
      'cursor=abc',
      'cursor=',
      'country=DE',
      'country=FR,DE,FR',
      'country=DE%2CIT',
      'country=,',
      'country=DE,',
      'countr%79=IT',
      'region%5Ftype=state',
      'country=D+E',
      'basin=pacific',
      'basin=atlantic,pacific',
      'basin=arctic',
      'region_id=C01763',
      'region_type=county',
      'bogus=1',
      '%zz=1',
      'limit=%zz',
      'bog%75s=1',
      '',
      '=',
      '=x',
      'as_of',
    ];
    let seed = 99;
    const rnd = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const seen = { ok: 0, errors: new Set<string>() };
    for (let i = 0; i < 4000; i++) {
      const raw = Array.from({ length: rnd(5) }, () => pieces[rnd(pieces.length)]!).join('&');
      for (const product of [gbsi, glmi, wssi]) {
        const expected = outcome(() => referenceQuery(raw, product, 'ds') as object);
        expect(
          outcome(() => parseQuery(raw, product, 'ds')),
          `${product.id} ?${raw}`,
        ).toEqual(expected);
        if ('code' in (expected as object)) seen.errors.add((expected as { message: string }).message.replace(/[0-9]+/g, 'N'));
        else seen.ok++;
      }
    }
    // the pieces reach both outcomes, and many different 400s
    expect(seen.ok).toBeGreaterThan(500);
    expect(seen.errors.size).toBeGreaterThan(15);
  });

  it("refuses an endpoint's refused parameters with its reason, before a repeat", () => {
    expect(outcome(() => parseWalkForward('decision_from=2024-01-01&decision_to=2024-01-05&as_of=2024-01-01', gbsi, 'ds'))).toMatchObject({
      code: 'invalid_parameter',
      param: 'as_of',
    });
    expect(outcome(() => parseVintages('latest=true', gbsi, 'ds'))).toMatchObject({ code: 'invalid_parameter', param: 'latest' });
    expect(outcome(() => parseWalkForward('decision_to=2024-01-05', gbsi, 'ds'))).toMatchObject({
      code: 'invalid_parameter',
      message: 'decision_from is required (a date YYYY-MM-DD)',
    });
    // an integer's least value is accepted (window may be 0)
    expect(outcome(() => parseWalkForward('decision_from=2024-01-01&decision_to=2024-01-05&window=0&step=1', gbsi, 'ds'))).toMatchObject({
      window: 0,
      step: 1,
    });
    expect(outcome(() => parseVintages('release=first&release=all', gbsi, 'ds'))).toMatchObject({ message: 'release is given more than once' });
    expect(outcome(() => parseVintages('release=firs%74', gbsi, 'ds'))).toMatchObject({ firstOnly: true });
  });

  it('gives each parameter once, by name, whether its key was written plainly or percent-encoded', () => {
    const p = splitParams('date%5Ffrom=2024-01-01&limit=7&country=D%45&latest', gbsi, { accepted: ['date_from', 'limit', 'latest'] });
    expect(p.get('date_from')).toBe('2024-01-01');
    expect(p.date(p.indexOf('date_from'))).toBe(parseDate('2024-01-01'));
    expect(p.digits(p.indexOf('limit'), 7)).toBe(7);
    expect(p.digits(p.indexOf('limit'), 0)).toBe(-1);
    expect(p.get('country')).toBe('DE');
    expect(p.is(p.indexOf('country'), 'DE')).toBe(true);
    expect(p.is(p.indexOf('country'), 'D%45')).toBe(false);
    expect(p.get('latest')).toBe('');
    expect(p.is(p.indexOf('latest'), '')).toBe(true);
    expect(p.indexOf('as_of')).toBe(-1);
    expect(p.get('as_of')).toBeUndefined();
    // the next scan starts afresh
    const q = splitParams('limit=8', gbsi, { accepted: ['limit'] });
    expect(q.indexOf('date_from')).toBe(-1);
    expect(q.get('limit')).toBe('8');
  });
});
