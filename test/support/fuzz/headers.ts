import fc from 'fast-check';
import type { FuzzWorld } from './types.js';

/** Headers, methods and bodies for the fuzz generator. */

export function headersArb(w: FuzzWorld): fc.Arbitrary<Array<[string, string]>> {
  const latin1 = fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 40,
  });
  const key: fc.Arbitrary<string[]> = fc.oneof(
    { arbitrary: fc.constant<string[]>([w.keys.main]), weight: 24 },
    { arbitrary: fc.constantFrom(...w.keys.others).map((k) => [k]), weight: 2 },
    { arbitrary: fc.constant([] as string[]), weight: 1 },
    {
      arbitrary: fc
        .constantFrom('', ' ', w.keys.main.toUpperCase(), ` ${w.keys.main}`, `${w.keys.main} `, w.keys.main.slice(1), 'x'.repeat(3000))
        .map((k) => [k]),
      weight: 2,
    },
    { arbitrary: latin1.map((k) => [k]), weight: 1 },
    { arbitrary: fc.tuple(fc.constantFrom(w.keys.main, ...w.keys.others), latin1).map(([a, b]): string[] => [a, b]), weight: 1 },
  );
  const media = fc.constantFrom(
    'application/json',
    'text/csv',
    'application/vnd.apache.arrow.stream',
    '*/*',
    'text/*',
    'application/*',
    'text/html',
    'image/png',
    'application/json;q=0',
    'text/csv;q=0.5, application/json;q=0.4',
    '*/*;q=abc',
    'application/json;q=1e999',
    'application/json;q=-1',
    ';;;,,,',
    'application/',
    '/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/csv;q=0, */*;q=0',
  );
  const enc = fc.constantFrom(
    'gzip',
    'br',
    'zstd',
    'deflate',
    'identity',
    '*',
    'gzip;q=0',
    'br;q=0, gzip;q=0, identity;q=0',
    'gzip, br',
    '*;q=0',
    'x-unknown',
    ',',
    'gzip;q=nan',
  );
  const opt = <T>(a: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(a, { nil: null, freq: 2 });
  const extraName = fc.oneof(
    fc.constantFrom(
      'x-forwarded-for',
      'forwarded',
      'x-real-ip',
      'cookie',
      'range',
      'content-type',
      'origin',
      'user-agent',
      'x-request-id',
      'authorization',
      'if-modified-since',
      'cache-control',
      'accept-charset',
    ),
    // The characters uWS parses in a header name (a name with any other token character gets
    // no answer from its parser: see bench/RESULTS.md, the fuzz section).
    fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-'), minLength: 1, maxLength: 20 }),
  );
  return fc
    .record({
      key,
      accept: opt(fc.oneof(media, latin1)),
      encoding: opt(fc.oneof(enc, latin1)),
      etag: opt(fc.oneof(w.etags.length > 0 ? fc.constantFrom(...w.etags) : fc.constant('W/"x"'), fc.constantFrom('*', 'W/', '""', 'W/"1-0"'), latin1)),
      extra: fc.array(fc.tuple(extraName, latin1), { maxLength: 3 }),
    })
    .map(({ key, accept, encoding, etag, extra }) => {
      const h: Array<[string, string]> = key.map((k) => ['x-api-key', k]);
      if (accept !== null) h.push(['accept', accept]);
      if (encoding !== null) h.push(['accept-encoding', encoding]);
      if (etag !== null) h.push(['if-none-match', etag]);
      for (const [n, v] of extra) h.push([n, v]);
      return h;
    });
}

export const methodArb = fc.oneof(
  { arbitrary: fc.constant('GET'), weight: 12 },
  { arbitrary: fc.constant('HEAD'), weight: 2 },
  { arbitrary: fc.constant('POST'), weight: 2 },
  // The methods uWS parses (it drops the connection on any other: bench/RESULTS.md, the fuzz section).
  { arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'CONNECT'), weight: 2 },
);

const bodyArb = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 4096 }), weight: 3 },
  { arbitrary: fc.jsonValue().map((v) => Buffer.from(JSON.stringify(v) ?? 'null')), weight: 2 },
  { arbitrary: fc.constantFrom('', 'at,country\n2026-03-01,DE\n', '{"', '\u0000'.repeat(100)).map((s) => Buffer.from(s)), weight: 1 },
  { arbitrary: fc.integer({ min: 64 * 1024, max: 512 * 1024 }).map((n) => Buffer.alloc(n, 0x61)), weight: 1 },
);

/** A body for methods that carry one (and now and then for those that do not), sent whole or chunked. */
export function withBody(method: string): fc.Arbitrary<{ body?: Uint8Array; chunked?: boolean }> {
  const carries = ['POST', 'PUT', 'PATCH'].includes(method);
  return fc
    .record({ body: fc.option(bodyArb, { nil: undefined, freq: carries ? 4 : 1 }), chunked: fc.boolean(), give: fc.nat(9) })
    .map(({ body, chunked, give }) => (body === undefined || (!carries && give < 7) ? {} : { body, chunked }));
}
