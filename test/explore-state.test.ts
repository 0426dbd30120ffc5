// The explorer's URL state (src/explore/page/state.js, contract 17): the page's own module,
// parsed and written back as the browser does.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_AS_OF, isAsOf, isDate, parseState, writeState, type ExploreState } from '../src/explore/page/state.js';

const EXAMPLE =
  'product=gbsi_eu&dataset=system_stress&series=country:DE&column=stress_index&as_of=2026-02-01,2026-03-01&date_from=2025-10-01&date_to=2026-04-30';

describe('explorer URL state', () => {
  it("reads the contract's example link", () => {
    const { state, problems } = parseState(`?${EXAMPLE}`);
    expect(problems).toEqual([]);
    expect(state).toEqual({
      product: 'gbsi_eu',
      dataset: 'system_stress',
      series: [['country', 'DE']],
      column: 'stress_index',
      asOf: ['2026-02-01', '2026-03-01'],
      dateFrom: '2025-10-01',
      dateTo: '2026-04-30',
    });
  });

  it('writes it back as the same link, separators bare', () => {
    expect(writeState(parseState(EXAMPLE).state)).toBe(EXAMPLE);
  });

  it('reads several series pairs, current and instants with offsets; a + stays a +', () => {
    const { state, problems } = parseState(
      'series=region_id:TX;region_type:state&as_of=current,2026-02-01T12:00:00Z,2026-02-01T12:00:00+01:00,2026-02-01T12:00:00.123456-05:30',
    );
    expect(problems).toEqual([]);
    expect(state.series).toEqual([
      ['region_id', 'TX'],
      ['region_type', 'state'],
    ]);
    expect(state.asOf).toEqual(['current', '2026-02-01T12:00:00Z', '2026-02-01T12:00:00+01:00', '2026-02-01T12:00:00.123456-05:30']);
    expect(writeState(state)).toBe(
      'series=region_id:TX;region_type:state&as_of=current,2026-02-01T12:00:00Z,2026-02-01T12:00:00%2B01:00,2026-02-01T12:00:00.123456-05:30',
    );
  });

  it('percent-decodes each part after splitting, so a value may hold a separator', () => {
    const { state } = parseState('series=name:a%3Bb%2Cc%3Ad&column=x%20y');
    expect(state.series).toEqual([['name', 'a;b,c:d']]);
    expect(state.column).toBe('x y');
    expect(writeState(state)).toBe('series=name:a%3Bb%2Cc:d&column=x%20y');
  });

  it(`keeps the first ${MAX_AS_OF} as_of instants and says so`, () => {
    const days = Array.from({ length: 10 }, (_, i) => `2026-01-${String(i + 10)}`);
    const { state, problems } = parseState(`as_of=${days.join(',')}`);
    expect(state.asOf).toEqual(days.slice(0, 8));
    expect(problems).toEqual([`as_of: at most 8 instants; "2026-01-18" and any after it are left out`]);
  });

  it('drops repeated as_of entries and empty ones without complaint', () => {
    const { state, problems } = parseState('as_of=current,,2026-01-02,current,2026-01-02');
    expect(state.asOf).toEqual(['current', '2026-01-02']);
    expect(problems).toEqual([]);
  });

  it('names what is wrong: a bad as_of, a bad date, reversed dates, a pair without colon, a repeated column, an unknown parameter', () => {
    const { state, problems } = parseState('as_of=yesterday,2026-01-02&date_from=2026-02-30&date_to=2026-01-01&series=DE;country:DE;country:FR&colour=red');
    expect(state.asOf).toEqual(['2026-01-02']);
    expect(state.dateFrom).toBe('');
    expect(state.dateTo).toBe('2026-01-01');
    expect(state.series).toEqual([['country', 'DE']]);
    expect(problems).toEqual([
      'as_of: "yesterday" is neither current, YYYY-MM-DD nor an RFC 3339 instant',
      'date_from: "2026-02-30" is not a YYYY-MM-DD date',
      'series: "DE" is not column:value',
      'series: country is given twice; the first is kept',
      'unknown parameter colour',
    ]);
    expect(parseState('date_from=2026-03-01&date_to=2026-02-01').problems).toEqual(['date_from 2026-03-01 is after date_to 2026-02-01']);
  });

  it('edge spellings: a parameter without =, an empty one, a series pair with empty column, spaces around as_of, an empty date', () => {
    const { state, problems } = parseState('product&dataset=&series=;:DE;country:&as_of=%202026-01-02%20&date_from=&date_to=2026-01-05');
    expect(state).toEqual({ product: '', dataset: '', series: [['country', '']], column: '', asOf: ['2026-01-02'], dateFrom: '', dateTo: '2026-01-05' });
    expect(problems).toEqual(['series: ":DE" is not column:value']);
    expect(parseState('date_to=&date_from=2026-01-05').problems).toEqual([]);
  });

  it('keeps a malformed escape as typed', () => {
    expect(parseState('column=a%zz').state.column).toBe('a%zz');
  });

  it('an empty query is the empty state, and the empty state writes nothing', () => {
    const { state, problems } = parseState('');
    expect(problems).toEqual([]);
    expect(writeState(state)).toBe('');
  });

  it('as_of and date checks', () => {
    for (const ok of ['current', '2026-01-31', '2026-01-31T00:00:00Z', '2026-01-31T00:00Z', '2026-01-31t10:00:00.5+02:00']) expect(isAsOf(ok), ok).toBe(true);
    for (const bad of [
      'now',
      '2026-1-31',
      '2026-01-31T00:00:00',
      '2026-01-31 00:00:00Z',
      '',
      'x2026-01-31',
      '2026-01-31x',
      'x2026-01-31T00:00Z',
      '2026-01-31T00:00Zx',
    ])
      expect(isAsOf(bad), bad).toBe(false);
    expect(isDate('x2026-01-31')).toBe(false);
    expect(isDate('2026-01-31T00:00:00Z')).toBe(false);
    expect(isDate('2024-02-29')).toBe(true);
    expect(isDate('2026-02-29')).toBe(false);
    expect(isDate('2026-13-01')).toBe(false);
  });

  it('any state written and read back is the same state', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 12 });
    const day = fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
    const instant = fc
      .tuple(
        fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2099-12-31T00:00:00Z'), noInvalidDate: true }),
        fc.constantFrom('Z', '+01:00', '-05:30'),
      )
      .map(([d, z]) => d.toISOString().slice(0, 19) + z);
    const state: fc.Arbitrary<ExploreState> = fc.record({
      product: text,
      dataset: text,
      series: fc.uniqueArray(fc.tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 8 }), text), { selector: ([c]) => c, maxLength: 3 }),
      column: text,
      asOf: fc.uniqueArray(fc.oneof(fc.constant('current'), day, instant), { maxLength: MAX_AS_OF }),
      dateFrom: fc.option(day, { nil: '' }),
      dateTo: fc.option(day, { nil: '' }),
    });
    fc.assert(
      fc.property(state, (s) => {
        const ordered = s.dateFrom !== '' && s.dateTo !== '' && s.dateFrom > s.dateTo ? { ...s, dateFrom: s.dateTo, dateTo: s.dateFrom } : s;
        const back = parseState(`?${writeState(ordered)}`);
        expect(back.problems).toEqual([]);
        expect(back.state).toEqual(ordered);
      }),
      { numRuns: 500 },
    );
  });
});
