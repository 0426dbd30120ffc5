import { describe, expect, it } from 'vitest';
import { ApiError } from '../src/errors.js';
import { writeEnvelopeHeaders, writeNextUrl, type EnvelopeFields } from '../src/format/envelope-headers.js';
import { HeaderWriter } from '../src/format/header-writer.js';
import { headerBlockPairs } from '../src/http/header-block.js';
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
  const base = { count: 2, totalCount: 5, nextCursor: 'abc_-9', dataLatestDate: 20_514, generation: 7, floorApplied: false };
  const envelope = (e: EnvelopeFields, age: number | null, path: string, query: string): Array<[string, string]> => {
    const h = new HeaderWriter();
    writeEnvelopeHeaders(h, e, age, path, query);
    return headerBlockPairs(h.block());
  };
  const nextUrl = (path: string, query: string, cursor: string): string => {
    const h = new HeaderWriter();
    writeNextUrl(h.start('link'), path, query, cursor);
    return headerBlockPairs(h.block())[0]![1];
  };

  it('a page with more: every header, Link to the same request with the cursor', () => {
    expect(envelope(base, 12.5, '/gbsi_eu/system_stress', 'country=DE&limit=2&format=csv')).toEqual([
      ['x-count', '2'],
      ['x-total-count', '5'],
      ['x-has-more', 'true'],
      ['x-next-cursor', 'abc_-9'],
      ['x-data-latest-date', '2026-03-02'],
      ['x-data-age-hours', '12.5'],
      ['x-generation', '7'],
      ['x-floor-applied', 'false'],
      ['link', '</gbsi_eu/system_stress?country=DE&limit=2&format=csv&cursor=abc_-9>; rel="next"'],
    ]);
  });

  it('the last page: no x-next-cursor, no Link; unknown latest date and age are left out', () => {
    expect(envelope({ ...base, nextCursor: null, dataLatestDate: null }, null, '/p/d', '')).toEqual([
      ['x-count', '2'],
      ['x-total-count', '5'],
      ['x-has-more', 'false'],
      ['x-generation', '7'],
      ['x-floor-applied', 'false'],
    ]);
    expect(envelope({ ...base, floorApplied: true }, null, '/p/d', '').find(([n]) => n === 'x-floor-applied')).toEqual(['x-floor-applied', 'true']);
  });

  it('an age that is not a finite number is left out; a finite one is written as String() writes it', () => {
    for (const age of [NaN, Infinity]) expect(envelope(base, age, '/p/d', '').map(([n]) => n)).not.toContain('x-data-age-hours');
    for (const age of [0, 1 / 3, 12_345.678_9, 0.1 + 0.2, 5e-7, 2 ** 53 + 2])
      expect(envelope(base, age, '/p/d', '').find(([n]) => n === 'x-data-age-hours')?.[1]).toBe(String(age));
  });

  it('the next URL replaces a previous cursor and keeps every other parameter as sent', () => {
    expect(nextUrl('/p/d', 'cursor=old&limit=1&as_of=2026-03-02T00%3A00%3A00Z', 'new')).toBe('/p/d?limit=1&as_of=2026-03-02T00%3A00%3A00Z&cursor=new');
    expect(nextUrl('/p/d', '', 'n')).toBe('/p/d?cursor=n');
    expect(nextUrl('/p/d', 'limit=1&&cursor', 'n')).toBe('/p/d?limit=1&cursor=n');
    expect(nextUrl('/p/d', '&limit=1&', 'n')).toBe('/p/d?limit=1&cursor=n');
    expect(nextUrl('/p/d', 'cursors=1&xcursor=2&cursor=3&cursor', 'n')).toBe('/p/d?cursors=1&xcursor=2&cursor=n');
    expect(nextUrl('/p/d', 'q=%C3%A9&r=\u00e9', 'n')).toBe('/p/d?q=%C3%A9&r=\u00c3\u00a9&cursor=n');
  });
});
