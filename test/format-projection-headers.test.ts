import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { appendEnvelopeHeaders, nextUrl, type HeaderList } from '../src/format/envelope-headers.js';
import { parseProjection, projectionKey } from '../src/format/projection.js';

const NAMES = ['date', 'str_effective_at', 'country', 'value', 'model_version', 'zone'];
const KEY = ['country', 'zone'];

function error(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('columns= projection', () => {
  it('absent: every column', () => {
    expect(parseProjection(undefined, NAMES, KEY)).toBeNull();
    expect(projectionKey(null)).toBe('*');
  });

  it('the named columns plus date and the series key, in schema order, whatever order or repeats were asked', () => {
    expect(parseProjection('value', NAMES, KEY)).toEqual([0, 2, 3, 5]);
    expect(parseProjection('model_version,value,value,date', NAMES, KEY)).toEqual([0, 2, 3, 4, 5]);
    expect(parseProjection('zone', NAMES, KEY)).toEqual([0, 2, 5]);
    expect(projectionKey([0, 2, 3, 5])).toBe('0.2.3.5');
  });

  it('an unknown column is a 400 naming it and listing the dataset columns', () => {
    const e = error(() => parseProjection('value,Value', NAMES, KEY));
    expect([e.status, e.code, e.param]).toEqual([400, 'invalid_parameter', 'columns']);
    expect(e.message).toContain('unknown column "Value"');
    expect(e.message).toContain(NAMES.join(', '));
  });

  it('an empty name (columns= or a,,b) is a 400', () => {
    for (const text of ['', 'value,', ',value', 'value,,zone']) {
      const e = error(() => parseProjection(text, NAMES, KEY));
      expect([e.status, e.param]).toEqual([400, 'columns']);
      expect(e.message).toBe(`columns must be a comma-separated list of column names; the columns of this dataset are: ${NAMES.join(', ')}`);
    }
  });
});

describe('envelope headers', () => {
  const base = { count: 2, totalCount: 5, nextCursor: 'abc_-9', dataLatestDate: 20_514, dataAgeHours: 12.5, generation: 7 };

  it('a page with more: every header, Link to the same request with the cursor', () => {
    const h: HeaderList = [];
    appendEnvelopeHeaders(h, base, '/gbsi_eu/system_stress', 'country=DE&limit=2&format=csv');
    expect(h).toEqual([
      ['x-count', '2'],
      ['x-total-count', '5'],
      ['x-has-more', 'true'],
      ['x-next-cursor', 'abc_-9'],
      ['x-data-latest-date', '2026-03-02'],
      ['x-data-age-hours', '12.5'],
      ['x-generation', '7'],
      ['link', '</gbsi_eu/system_stress?country=DE&limit=2&format=csv&cursor=abc_-9>; rel="next"'],
    ]);
  });

  it('the last page: no x-next-cursor, no Link; unknown latest date and age are left out', () => {
    const h: HeaderList = [];
    appendEnvelopeHeaders(h, { ...base, nextCursor: null, dataLatestDate: null, dataAgeHours: null }, '/p/d', '');
    expect(h).toEqual([
      ['x-count', '2'],
      ['x-total-count', '5'],
      ['x-has-more', 'false'],
      ['x-generation', '7'],
    ]);
  });

  it('an age that is not a finite number is left out', () => {
    for (const dataAgeHours of [NaN, Infinity]) {
      const h: HeaderList = [];
      appendEnvelopeHeaders(h, { ...base, dataAgeHours }, '/p/d', '');
      expect(h.map(([n]) => n)).not.toContain('x-data-age-hours');
    }
  });

  it('the next URL replaces a previous cursor and keeps every other parameter as sent', () => {
    expect(nextUrl('/p/d', 'cursor=old&limit=1&as_of=2026-03-02T00%3A00%3A00Z', 'new')).toBe('/p/d?limit=1&as_of=2026-03-02T00%3A00%3A00Z&cursor=new');
    expect(nextUrl('/p/d', '', 'n')).toBe('/p/d?cursor=n');
    expect(nextUrl('/p/d', 'limit=1&&cursor', 'n')).toBe('/p/d?limit=1&cursor=n');
  });
});
