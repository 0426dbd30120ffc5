import fc from 'fast-check';
import type { FuzzDataset } from './types.js';
import { KNOWN_NAMES, adversarial, encode, encoding, validValues, valueFor } from './values.js';

type Pair = readonly [name: string, value: string | null];

/** The query string of `pairs` (null value: a name without '='), with its separators sometimes doubled or dangling. */
const joinQuery = (pairs: readonly Pair[], nameHow: readonly string[], valueHow: readonly string[], sep: string, lead: string): string =>
  lead +
  pairs
    .map(([n, v], i) => {
      const name = encode(n, nameHow[i % nameHow.length]!);
      return v === null ? name : `${name}=${encode(v, valueHow[i % valueHow.length]!)}`;
    })
    .join(sep);

/**
 * A query string: now and then only the endpoint's own parameters with valid values (so
 * answers with rows are generated too, at the edges of what is valid), else any names with
 * any values.
 */
export function queryArb(params: readonly string[], d: FuzzDataset): fc.Arbitrary<string> {
  return fc.oneof({ arbitrary: validQueryArb(params, d), weight: 1 }, { arbitrary: anyQueryArb(params, d), weight: 2 });
}

export function validQueryArb(params: readonly string[], d: FuzzDataset): fc.Arbitrary<string> {
  const own = [...params, ...d.filters.keys()].filter((n) => n !== 'cursor' && validValues(n, d).length > 0);
  return fc
    .uniqueArray(fc.constantFrom(...own), { maxLength: 5 })
    .chain((names) => fc.tuple(...names.map((n) => fc.constantFrom(...validValues(n, d)).map((v) => `${n}=${encodeURIComponent(v)}`))))
    .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.join('&')}`));
}

function anyQueryArb(params: readonly string[], d: FuzzDataset): fc.Arbitrary<string> {
  const own = [...params, ...d.filters.keys()];
  const name = fc.oneof(
    { arbitrary: fc.constantFrom(...own), weight: 6 },
    { arbitrary: fc.constantFrom(...KNOWN_NAMES), weight: 2 },
    { arbitrary: fc.constantFrom(...own).map((n) => n.toUpperCase()), weight: 1 },
    { arbitrary: adversarial(own), weight: 1 },
  );
  const pair: fc.Arbitrary<Pair> = fc.oneof(
    { arbitrary: name.chain((n) => valueFor(n, d).map((v): Pair => [n, v])), weight: 8 },
    { arbitrary: name.map((n): Pair => [n, null]), weight: 1 },
    { arbitrary: name.map((n): Pair => [n, '']), weight: 1 },
  );
  return fc
    .record({
      pairs: fc.array(pair, { maxLength: 7 }),
      repeat: fc.option(fc.nat(), { nil: null }),
      nameHow: fc.array(fc.oneof({ arbitrary: fc.constant('raw'), weight: 6 }, { arbitrary: encoding, weight: 1 }), { minLength: 1, maxLength: 3 }),
      valueHow: fc.array(encoding, { minLength: 1, maxLength: 3 }),
      sep: fc.constantFrom('&', '&', '&', '&', '&&', ';'),
      lead: fc.constantFrom('?', '?', '?', '?', '?&', '??', ''),
    })
    .map(({ pairs, repeat, nameHow, valueHow, sep, lead }) => {
      // A parameter given twice (same or another value) is its own kind of bad input.
      const all = repeat !== null && pairs.length > 0 ? [...pairs, pairs[repeat % pairs.length]!] : pairs;
      const q = joinQuery(all, nameHow, valueHow, sep, lead);
      return lead === '' && q !== '' ? '?' + q : q;
    });
}
