import fc from 'fast-check';
import { headersArb } from './headers.js';
import type { FuzzCase, FuzzWorld } from './types.js';
import { encode, encoding } from './values.js';

/**
 * A cursor mutated byte by byte on its chain's own endpoint: either the chain's own request
 * with only the cursor's bytes changed (an exact expected answer), or with other headers,
 * another encoding of the token, or one query parameter changed as well.
 */
export function cursorCase(w: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const alphabet = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/=.~% \u00e9');
  const mutation = fc.oneof(
    fc.record({ op: fc.constant('replace'), at: fc.nat(), c: alphabet }),
    fc.record({ op: fc.constant('insert'), at: fc.nat(), c: alphabet }),
    fc.record({ op: fc.constantFrom('delete', 'truncate', 'swap', 'case', 'double', 'empty', 'flip-bit', 'none'), at: fc.nat(), c: fc.constant('') }),
  );
  const key: [string, string] = ['x-api-key', w.keys.main];
  const variation = fc.record({
    how: encoding,
    // One parameter dropped or added (or none).
    query: fc.option(
      fc.tuple(fc.nat(), fc.constantFrom('limit=3', 'as_of=2026-03-02', 'generation=1', 'format=csv', 'latest=true', 'step=2', 'release=first')),
      { nil: null },
    ),
    headers: headersArb(w).map((h) => [key, ...h.filter(([n]) => n !== 'x-api-key')]),
  });
  return fc
    .record({
      sample: fc.constantFrom(...w.cursors),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 3 }),
      variation: fc.option(variation, { nil: null, freq: 2 }),
    })
    .map(({ sample, mutations, variation }): FuzzCase => {
      let token = sample.cursor;
      for (const m of mutations) token = mutate(token, m.op, m.at, m.c);
      const pairs = sample.query.map(([n, v]) => `${encodeURIComponent(n)}=${encodeURIComponent(v)}`);
      if (variation !== null && variation.query !== null) {
        const [drop, add] = variation.query;
        if (pairs.length > 0 && drop % 2 === 0) pairs.splice(drop % pairs.length, 1);
        else pairs.push(add);
      }
      const target = `${sample.path}?${[...pairs, `cursor=${encode(token, variation?.how ?? 'component')}`].join('&')}`;
      if (variation === null) return { kind: 'cursor', request: { method: 'GET', target, headers: [key] }, cursor: { original: sample.cursor, sent: token } };
      return { kind: 'cursor-varied', request: { method: 'GET', target, headers: variation.headers } };
    });
}

export function mutate(token: string, op: string, at: number, c: string): string {
  const i = token.length === 0 ? 0 : at % token.length;
  switch (op) {
    case 'replace':
      return token.slice(0, i) + c + token.slice(i + 1);
    case 'insert':
      return token.slice(0, i) + c + token.slice(i);
    case 'delete':
      return token.slice(0, i) + token.slice(i + 1);
    case 'truncate':
      return token.slice(0, i);
    case 'swap':
      return token.length < 2 ? token : token.slice(0, i) + token.slice(i + 1, i + 2) + token.slice(i, i + 1) + token.slice(i + 2);
    case 'case': {
      const ch = token.charAt(i);
      return token.slice(0, i) + (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase()) + token.slice(i + 1);
    }
    case 'double':
      return token + token;
    case 'empty':
      return '';
    case 'flip-bit': {
      // One bit of the decoded bytes flipped, re-encoded: a well-formed token with altered content.
      const b = Buffer.from(token, 'base64url');
      if (b.length === 0) return token;
      b[i % b.length]! ^= 1 << (at % 8);
      return b.toString('base64url');
    }
    default:
      return token;
  }
}
