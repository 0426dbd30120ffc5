import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { etagOf, ifNoneMatchHits } from '../src/format/etag.js';
import { RequestKey } from '../src/cache/request-key.js';
import { negotiateEncoding, negotiateFormat } from '../src/format/negotiate.js';

function err(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('did not throw');
}

describe('format negotiation', () => {
  it.each([
    ['', 'json'],
    ['   ', 'json'],
    ['*/*', 'json'],
    ['application/json', 'json'],
    ['text/csv', 'csv'],
    ['application/vnd.apache.arrow.stream', 'arrow'],
    ['TEXT/CSV', 'csv'],
    ['text/*', 'csv'],
    ['application/*', 'json'],
    ['text/csv;q=0.5, application/vnd.apache.arrow.stream;q=0.9', 'arrow'],
    ['application/vnd.apache.arrow.stream;q=0.8, text/csv;q=0.8', 'arrow'],
    ['text/csv;q=0.8, application/vnd.apache.arrow.stream;q=0.8', 'csv'],
    ['application/json;q=0, */*;q=0.1', 'csv'],
    ['application/json;q=0, text/csv;q=0, */*', 'arrow'],
    ['text/html, */*;q=0.2', 'json'],
    ['text/csv; charset=utf-8; q=0.7, application/json; q=0.6', 'csv'],
    ['text/csv;q=1.0', 'csv'],
    ['*/*, text/csv;q=0', 'json'],
  ])('Accept %j -> %s', (accept, format) => {
    expect(negotiateFormat(undefined, accept)).toBe(format);
  });

  it('format= wins over Accept', () => {
    expect(negotiateFormat('csv', 'application/json')).toBe('csv');
    expect(negotiateFormat('arrow', 'text/html')).toBe('arrow');
    expect(negotiateFormat('json', 'text/csv')).toBe('json');
  });

  it('an unknown format is a 400 naming the parameter', () => {
    for (const f of ['', 'CSV', 'parquet', 'json ']) {
      const e = err(() => negotiateFormat(f, ''));
      expect([e.status, e.code, e.param]).toEqual([400, 'invalid_parameter', 'format']);
    }
  });

  it.each([
    ['text/html'],
    ['image/png, text/plain'],
    ['application/json;q=0, text/csv;q=0, application/vnd.apache.arrow.stream;q=0'],
    ['*/*;q=0'],
    ['text/csv;q=2'],
    ['text/csv;q=abc'],
  ])('Accept %j admits none of the three: 406 not_acceptable', (accept) => {
    const e = err(() => negotiateFormat(undefined, accept));
    expect([e.status, e.code]).toEqual([406, 'not_acceptable']);
    expect(e.message).toContain('text/csv');
  });
});

describe('encoding negotiation', () => {
  it.each([
    ['', null],
    ['identity', null],
    ['gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, br', 'br'],
    ['br;q=0.5, gzip', 'gzip'],
    ['gzip;q=0.5, br;q=0.5', 'br'],
    ['*', 'br'],
    ['*;q=0.5, gzip;q=0.9', 'gzip'],
    ['*, br;q=0', 'gzip'],
    ['gzip;q=0, br;q=0', null],
    ['*;q=0', null],
    ['deflate', null],
    ['zstd', null],
    ['x-gzip', 'gzip'],
    ['GZIP', 'gzip'],
    ['gzip;q=0.001', 'gzip'],
    ['br;q=0.000', null],
  ])('Accept-Encoding %j -> %s', (header, encoding) => {
    expect(negotiateEncoding(header)).toBe(encoding);
  });
});

describe('ETag', () => {
  it('names the generation; differs by request, dataset and generation; stable for the same', () => {
    const of = (dataset: string, generation: number, format: string): string =>
      etagOf(new RequestKey().fill({ dataset, generation, canonical: 'q', format, columns: '*', encoding: 'br', cursor: null }));
    const e = of('pemi/grid_stress', 7, 'json');
    expect(e).toMatch(/^W\/"g7-[0-9a-z]+"$/);
    expect(of('pemi/grid_stress', 7, 'json')).toBe(e);
    expect(of('pemi/grid_stress', 8, 'json')).not.toBe(e);
    expect(of('pemi/grid_stress', 7, 'csv')).not.toBe(e);
    expect(of('glmi/marginality', 7, 'json')).not.toBe(e);
  });

  it('If-None-Match: weak comparison, lists, *, and no match', () => {
    const e = 'W/"g7-abc"';
    expect(ifNoneMatchHits('W/"g7-abc"', e)).toBe(true);
    expect(ifNoneMatchHits('"g7-abc"', e)).toBe(true);
    expect(ifNoneMatchHits('"x", W/"g7-abc"', e)).toBe(true);
    expect(ifNoneMatchHits('*', e)).toBe(true);
    expect(ifNoneMatchHits('', e)).toBe(false);
    expect(ifNoneMatchHits('W/"g7-abd"', e)).toBe(false);
    expect(ifNoneMatchHits('W/"g8-abc"', e)).toBe(false);
  });
});
