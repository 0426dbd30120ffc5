import { describe, expect, it } from 'vitest';
import { findProduct } from '../src/catalog/products.js';
import { ApiError } from '../src/errors.js';
import { canonicalString } from '../src/query/canonical-text.js';
import { parseQuery } from '../src/query/parse-query.js';
import type { Query } from '../src/query/query.js';
import { QueryScratch } from '../src/query/query-scratch.js';

const wssi = findProduct('wssi_us')!;
const glmi = findProduct('glmi')!;

/** A plain copy (the scratch's objects, and the thread's canonical text, are refilled by the next parse). */
function copyOf(q: Query): Query {
  return { ...q, canonical: canonicalString(q.canonical), filters: q.filters.map((f) => ({ column: f.column, values: [...f.values] })) };
}

/**
 * One serving thread's sequence of queries, parsed one after another into one scratch: each
 * refills what the one before left (more filters, fewer, none, a list where a single value
 * was, and back).
 */
const SEQUENCE: readonly [typeof wssi, string][] = [
  [wssi, 'date_from=2022-03-24&date_to=2022-06-22&as_of=2022-06-22&region_id=C01763&region_type=county'],
  [wssi, 'region_id=C2,C1,C2&region_type=county&limit=5'],
  [wssi, 'latest=true'],
  [wssi, 'region_type=state'],
  [wssi, 'region_id=C9&region_type=state,county&generation=4&as_of=2026-01-02T03:04:05Z'],
  [wssi, 'region_id=C7&region_type=county&cursor=abc'],
  [glmi, 'basin=pacific&date_to=2025-07-11'],
  [glmi, 'basin=atlantic,pacific'],
  [wssi, 'region_id=C4,C3'],
  [wssi, ''],
  [wssi, 'region_id=C01763&region_type=county&latest=false'],
];

describe('QueryScratch: what a serving thread parses data requests into', () => {
  it('answers each query of a sequence as a parse of its own would', () => {
    const scratch = new QueryScratch();
    for (const [product, raw] of SEQUENCE) {
      const fresh = parseQuery(raw, product, 'ds');
      const refilled = parseQuery(raw, product, 'ds', scratch);
      expect(copyOf(refilled), raw).toEqual(fresh);
    }
  });

  it('is one Query, and one list per number of filters, refilled by every parse', () => {
    const scratch = new QueryScratch();
    const a = parseQuery(SEQUENCE[0]![1], wssi, 'ds', scratch);
    const aFilters = a.filters;
    const aFirst = aFilters[0];
    const b = parseQuery('region_id=X&region_type=Y', wssi, 'ds', scratch);
    expect(b).toBe(a);
    expect(b.filters).toBe(aFilters);
    expect(b.filters[0]).toBe(aFirst);
    expect(b.filters).toEqual([
      { column: 'region_id', values: ['X'] },
      { column: 'region_type', values: ['Y'] },
    ]);
    const c = parseQuery('region_type=Z', wssi, 'ds', scratch);
    expect(c.filters).not.toBe(aFilters);
    expect(c.filters).toEqual([{ column: 'region_type', values: ['Z'] }]);
    expect(parseQuery('', wssi, 'ds', scratch).filters).toEqual([]);
  });

  it('a parse refused midway leaves nothing of it in the next answer', () => {
    const scratch = new QueryScratch();
    parseQuery('region_id=A&region_type=B', wssi, 'ds', scratch);
    expect(() => parseQuery('region_id=Q&region_type=', wssi, 'ds', scratch)).toThrow(ApiError);
    expect(() => parseQuery('basin=nowhere', glmi, 'ds', scratch)).toThrow(ApiError);
    expect(copyOf(parseQuery('region_id=A&region_type=B', wssi, 'ds', scratch))).toEqual(parseQuery('region_id=A&region_type=B', wssi, 'ds'));
  });

  it("without a scratch, every parse is the caller's own", () => {
    const a = parseQuery('region_id=A', wssi, 'ds');
    const b = parseQuery('region_id=B', wssi, 'ds');
    expect(a).not.toBe(b);
    expect(a.filters).toEqual([{ column: 'region_id', values: ['A'] }]);
  });
});
