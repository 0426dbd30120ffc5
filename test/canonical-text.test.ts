import { describe, expect, it } from 'vitest';
import { findProduct } from '../src/catalog/products.js';
import { CanonicalText, canonicalString, canonicalText, sameCanonical } from '../src/query/canonical-text.js';
import { fnv1a } from '../src/query/hash.js';
import { parseQuery } from '../src/query/parse-query.js';
import { parseVintages, VINTAGES_DEFAULT_LIMIT } from '../src/query/parse-vintages.js';
import { parseWalkForward } from '../src/query/parse-walk-forward.js';
import type { FilterClause } from '../src/query/query.js';
import { QueryScratch } from '../src/query/query-scratch.js';
import { dayEndUs, parseDate } from '../src/time/instant.js';

/**
 * The canonical texts the parsers used to build by joining strings, spelled out: a cursor
 * carries fnv1a of its query's text, so a text that changed by one unit would refuse the
 * cursors of other replicas and of the release before (and change every ETag).
 */
const filterText = (filters: readonly FilterClause[]): string => filters.map((f) => `\u0001${f.column}=${f.values.join('\u0000')}`).join('');
const joined = (parts: ReadonlyArray<string | number | null>, filters: readonly FilterClause[]): string =>
  parts.map((p) => p ?? '').join('\u0001') + filterText(filters);

describe('CanonicalText: a query text written part by part', () => {
  it('writes numbers as `${n}` does, strings unit for unit, and hashes what it wrote as fnv1a', () => {
    const numbers = [
      0,
      -0,
      1,
      7,
      9,
      10,
      99,
      100,
      12345,
      99_999_999,
      100_000_000,
      100_000_001,
      199_999_999,
      999_999_999,
      1_000_000_000,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 32,
      1_656_028_799_999_999,
      Number.MAX_SAFE_INTEGER,
      -1,
      -100_000_000,
      -1_656_028_799_999_999,
      -Number.MAX_SAFE_INTEGER,
      2 ** 53,
      1e21,
      1.5,
      -0.25,
      NaN,
      Infinity,
    ];
    let seed = 7;
    const rnd = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed;
    };
    // every digit count, and halves (÷1e8) at their edges
    for (let i = 0; i < 2000; i++) numbers.push(Math.floor((rnd() / 2 ** 32) * 10 ** (1 + (i % 16))) * (i % 3 === 0 ? -1 : 1));
    const strings = ['', 'gbsi_eu', 'é', 'Zürich', '漢字', '😀', 'a\u0001b', 'x'.repeat(700)];
    const t = new CanonicalText();
    for (const n of numbers) {
      for (const s of strings) {
        const text = t.begin(s).num(n).num(null).part(s).take();
        const expected = `${s}\u0001${n}\u0001\u0001${s}`;
        expect(text, `${s} ${n}`).toBe(expected);
        expect(t.fingerprint, `${s} ${n}`).toBe(fnv1a(expected));
      }
    }
  });

  it('writes filters as \\u0001column=v1\\u0000v2, each after the last, and nothing without any', () => {
    const t = new CanonicalText();
    const filters: FilterClause[] = [
      { column: 'country', values: ['DE', 'FR'] },
      { column: 'region_type', values: ['state'] },
      { column: 'region_id', values: ['Région 1', 'x'.repeat(300)] },
    ];
    expect(t.begin('p').filters([]).take()).toBe('p');
    const text = t.begin('p').filters(filters).take();
    expect(text).toBe(`p${filterText(filters)}`);
    expect(text).toBe('p\u0001country=DE\u0000FR\u0001region_type=state\u0001region_id=Région 1\u0000' + 'x'.repeat(300));
    expect(t.fingerprint).toBe(fnv1a(text));
  });

  it('starts afresh at begin: nothing of a longer text before is left', () => {
    const t = new CanonicalText();
    t.begin('a'.repeat(1000)).part('b').num(123);
    expect(t.begin('c').num(4).take()).toBe('c\u00014');
    expect(t.fingerprint).toBe(fnv1a('c\u00014'));
    expect(t.begin('').take()).toBe('');
    expect(t.fingerprint).toBe(fnv1a(''));
  });
});

describe('the parsers give the canonical texts they gave when they joined them', () => {
  const gbsi = findProduct('gbsi_eu')!;
  const wssi = findProduct('wssi_us')!;
  const day = (d: string): number => parseDate(d)!;

  it('GET /{product}/{dataset}: product, dataset, L or A, dates, limit, as_of µs, generation, filters', () => {
    const cases: Array<[string, string]> = [
      ['', 'L\u0001\u0001\u0001200\u0001\u0001'],
      [
        'date_from=2022-03-24&date_to=2022-06-22&as_of=2022-06-22',
        `A\u0001${day('2022-03-24')}\u0001${day('2022-06-22')}\u0001200\u0001${dayEndUs(day('2022-06-22'))}\u0001`,
      ],
      ['latest=false&limit=10000&generation=4294967295', 'A\u0001\u0001\u000110000\u0001\u00014294967295'],
      ['as_of=1969-12-31T00:00:00Z&date_to=1960-01-01', `L\u0001\u0001${day('1960-01-01')}\u0001200\u0001${-86_400_000_000}\u0001`],
    ];
    for (const [raw, middle] of cases) {
      const q = parseQuery(raw, gbsi, 'system_stress');
      expect(q.canonical, raw).toBe(`gbsi_eu\u0001system_stress\u0001${middle}`);
      expect(q.fingerprint, raw).toBe(fnv1a(canonicalString(q.canonical)));
    }
    const q = parseQuery('region_type=county&region_id=C2,C1,C2&date_from=2024-01-01', wssi, 'demand_shock');
    expect(q.canonical).toBe(
      joined(
        ['wssi_us', 'demand_shock', 'A', day('2024-01-01'), null, 200, null, null],
        [
          { column: 'region_id', values: ['C1', 'C2'] },
          { column: 'region_type', values: ['county'] },
        ],
      ),
    );
  });

  it('walk_forward: its name first, then product, dataset, decisions, step, window, limit, generation, filters', () => {
    for (const raw of [
      'decision_from=2024-01-01&decision_to=2024-03-01',
      'decision_from=2024-01-01&decision_to=2024-03-01&step=7&window=30&limit=5&generation=12&country=FR,DE',
    ]) {
      const q = parseWalkForward(raw, gbsi, 'system_stress');
      expect(q.canonical, raw).toBe(
        joined(['walk_forward', 'gbsi_eu', 'system_stress', q.decisionFrom, q.decisionTo, q.step, q.window, q.limit, q.generation], q.filters),
      );
      expect(q.fingerprint).toBe(fnv1a(q.canonical));
    }
    expect(parseWalkForward('decision_from=2024-01-01&decision_to=2024-03-01&step=7&window=30&limit=5&generation=12&country=FR,DE', gbsi, 'ds').canonical).toBe(
      `walk_forward\u0001gbsi_eu\u0001ds\u0001${day('2024-01-01')}\u0001${day('2024-03-01')}\u00017\u000130\u00015\u000112\u0001country=DE\u0000FR`,
    );
  });

  it('vintages: its name first, then product, dataset, dates, as_of µs, release, limit, generation, filters', () => {
    const q = parseVintages('date_from=2024-01-01&as_of=2024-02-01&release=first&country=IT', gbsi, 'ds');
    expect(q.canonical).toBe(
      `vintages\u0001gbsi_eu\u0001ds\u0001${day('2024-01-01')}\u0001\u0001${dayEndUs(day('2024-02-01'))}\u0001first\u0001${VINTAGES_DEFAULT_LIMIT}\u0001\u0001country=IT`,
    );
    expect(q.canonical).toBe(joined(['vintages', 'gbsi_eu', 'ds', q.dateFrom, q.dateTo, q.asOfUs, 'first', q.limit, q.generation], q.filters));
    expect(q.fingerprint).toBe(fnv1a(q.canonical));
    const all = parseVintages('', gbsi, 'ds');
    expect(all.canonical).toBe(joined(['vintages', 'gbsi_eu', 'ds', null, null, null, 'all', all.limit, null], []));
  });
});

describe("A query parsed into a scratch: its canonical text is the thread's, read where it was written", () => {
  const gbsi = findProduct('gbsi_eu')!;
  const raws = ['', 'date_from=2022-03-24&date_to=2022-06-22&as_of=2022-06-22', 'latest=false&limit=10000&generation=4294967295&country=FR,DE', 'country=IT'];

  it("is the thread's CanonicalText holding the very text the parse without a scratch makes, hashed alike from any seed", () => {
    const scratch = new QueryScratch();
    for (const raw of raws) {
      const own = parseQuery(raw, gbsi, 'system_stress').canonical;
      expect(typeof own).toBe('string');
      const q = parseQuery(raw, gbsi, 'system_stress', scratch);
      expect(q.canonical, raw).toBe(canonicalText);
      const text = q.canonical as CanonicalText;
      expect(text.take(), raw).toBe(own);
      expect(text.length, raw).toBe((own as string).length);
      for (const seed of [0x811c9dc5, 0x9e3779b9, 0, 1]) expect(text.fnvRun(seed) >>> 0, raw).toBe(fnv1a(own as string, seed));
      expect(canonicalString(q.canonical)).toBe(own);
    }
  });

  it('equals: the same text unit for unit, not a prefix, a longer text, or one unit off', () => {
    const t = new CanonicalText().begin('gbsi_eu').part('ds').num(19_000);
    const s = 'gbsi_eu\u0001ds\u000119000';
    expect(t.equals(s)).toBe(true);
    expect(t.equals(s.slice(0, -1))).toBe(false);
    expect(t.equals(`${s}0`)).toBe(false);
    expect(t.equals(`${s.slice(0, -1)}1`)).toBe(false);
    expect(t.equals(`x${s.slice(1)}`)).toBe(false);
    expect(new CanonicalText().begin('').equals('')).toBe(true);
  });

  it('sameCanonical: strings by value, a text against a string by its units, a text against a text only as itself', () => {
    const a = new CanonicalText().begin('a').part('b');
    const b = new CanonicalText().begin('a').part('b');
    expect(sameCanonical('a\u0001b', 'a\u0001b')).toBe(true);
    expect(sameCanonical('a\u0001b', 'a\u0001c')).toBe(false);
    expect(sameCanonical(a, 'a\u0001b')).toBe(true);
    expect(sameCanonical('a\u0001b', a)).toBe(true);
    expect(sameCanonical(a, 'a\u0001c')).toBe(false);
    expect(sameCanonical('a\u0001c', a)).toBe(false);
    expect(sameCanonical(a, a)).toBe(true);
    expect(sameCanonical(a, b)).toBe(false);
  });
});
