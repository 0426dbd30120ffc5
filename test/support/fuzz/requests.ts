/**
 * Generated requests for the fuzz test and its long run (bench/fuzz): every endpoint the
 * server's OpenAPI document names, with its own parameters, the other endpoints' and
 * made-up ones, each value valid, adversarial (unicode, huge numbers, broken
 * percent-encoding, empty) or a real cursor mutated byte by byte, written in one of
 * several encodings; headers the same way; bodies where a method may carry one.
 */
import fc from 'fast-check';
import { cursorCase } from './cursor-case.js';
import { headersArb, methodArb, withBody } from './headers.js';
import { joinCase } from './join-case.js';
import { queryArb } from './query.js';
import type { FuzzCase, FuzzWorld } from './types.js';
import { adversarial, encode } from './values.js';

export type { CursorSample, FuzzCase, FuzzDataset, FuzzWorld } from './types.js';
export { mutate } from './cursor-case.js';

const FIXED_EXTRA_PATHS = ['/', '', '/favicon.ico', '/explore', '/catalog', '/admin', '/admin/', '/healthz/', '/metrics/x', '/*', '//', '/%2e%2e/admin/status'];

/** A path segment spoiled: another case, percent-encoded letters, a dot segment, or anything. */
const segmentArb = (valid: string): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: fc.constant(valid), weight: 24 },
    { arbitrary: fc.constant(valid.toUpperCase()), weight: 1 },
    { arbitrary: fc.constantFrom('every-byte', 'every-byte-lower', 'stray-percent').map((how) => encode(valid, how)), weight: 1 },
    { arbitrary: fc.constantFrom('.', '..', '', '%2e%2e', valid + '%00', valid + ';x=1', valid + '.json'), weight: 1 },
    { arbitrary: fc.tuple(adversarial([valid]), fc.constantFrom('component', 'raw', 'raw-bytes', 'every-byte')).map(([s, how]) => encode(s, how)), weight: 2 },
  );

/** A data request: an endpoint of a dataset, its parameters, headers, a method and maybe a body. */
function dataCase(w: FuzzWorld): fc.Arbitrary<FuzzCase> {
  return fc
    .tuple(fc.constantFrom(...w.datasets), fc.constantFrom(...w.dataEndpoints))
    .chain(([d, e]) =>
      fc.record({
        product: segmentArb(d.productId),
        dataset: segmentArb(d.dataset),
        suffix: fc.oneof(
          { arbitrary: fc.constant(e.suffix), weight: 8 },
          { arbitrary: fc.constantFrom('/', '//', e.suffix + '/', e.suffix + '/x', '/walk_forward/vintages'), weight: 1 },
        ),
        query: queryArb(e.params, d),
        headers: headersArb(w),
        method: methodArb,
      }),
    )
    .chain((c) =>
      withBody(c.method).map((b): FuzzCase => ({
        kind: 'data',
        request: { method: c.method, target: `/${c.product}/${c.dataset}${c.suffix}${c.query}`, headers: c.headers, ...b },
      })),
    );
}

/** Any other path: the operational endpoints, public ones, and paths that name nothing. */
function otherCase(w: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const paths = [...w.fixedPaths.map((p) => p.path), ...FIXED_EXTRA_PATHS];
  const admin = w.keys.others.at(-1)!;
  return fc
    .record({
      path: fc.oneof(
        { arbitrary: fc.constantFrom(...paths), weight: 3 },
        { arbitrary: fc.array(segmentArb('x'), { minLength: 1, maxLength: 5 }).map((s) => '/' + s.join('/')), weight: 1 },
      ),
      query: fc.option(
        fc.tuple(fc.constantFrom(...w.datasets), fc.constantFrom(...w.dataEndpoints)).chain(([d, e]) => queryArb(e.params, d)),
        { nil: '' },
      ),
      headers: headersArb(w),
      admin: fc.boolean(),
      method: fc.oneof(methodArb, fc.constantFrom(...w.fixedPaths.map((p) => p.method))),
    })
    .chain((c) =>
      withBody(c.method).map((b): FuzzCase => {
        const target = c.path === '' || c.path.startsWith('/') ? `${c.path === '' ? '/' : c.path}${c.query}` : `/${c.path}${c.query}`;
        // The admin key now and then, so the operational endpoints are reached too.
        const headers = c.admin ? [['x-api-key', admin] as [string, string], ...c.headers.filter(([n]) => n !== 'x-api-key')] : c.headers;
        return { kind: 'other', request: { method: c.method, target, headers, ...b } };
      }),
    );
}

/** Every kind of case, data requests most often. */
export function fuzzCaseArb(w: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const cases: Array<fc.WeightedArbitrary<FuzzCase>> = [
    { arbitrary: dataCase(w), weight: 6 },
    { arbitrary: cursorCase(w), weight: 3 },
    { arbitrary: otherCase(w), weight: 2 },
  ];
  // Bodies where the API takes one (when the server has the endpoint).
  const join = joinCase(w);
  if (join !== null) cases.push({ arbitrary: join, weight: 3 });
  return fc.oneof(...cases);
}
