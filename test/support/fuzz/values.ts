import fc from 'fast-check';
import type { FuzzDataset } from './types.js';

/**
 * Parameter values for the fuzz generator: each parameter's valid values, adversarial ones
 * (tricky constants, any unicode, huge numbers, a valid value spoiled), and the encodings a
 * value is written into a query string with.
 */

// prettier-ignore
export const TRICKY = [
  '', ' ', '%', '%%', '%2', '%zz', '%00', '%0A', '%0D%0A', '%C3%28', '%FF', '%E2%82', '%ED%A0%80', '%F4%90%80%80', '%25', '%2525', '+', ',', ',,',
  ', ,', '&', '=', '==', '?', '#', '/', '..', '.', '\\', "'", '"', '<script>', '{}', '[]', 'null', 'undefined', 'true', 'false', 'NaN', 'Infinity',
  '-Infinity', '1e309', '-1e309', '1e-400', '-0', '0', '00', '0x10', '0b1', '0o7', '1_000', '1,000', '1.0', '1.5', '.5', '5.', ' 5', '5 ', '+5',
  '-1', '-2147483649', '2147483647', '2147483648', '4294967295', '4294967296', '9007199254740991', '9007199254740993', '18446744073709551616',
  '9'.repeat(40), '9'.repeat(400), '0000-00-00', '0000-01-01', '0001-01-01', '1969-12-31', '1970-01-01', '2026-02-29', '2024-02-29', '2026-04-31',
  '2026-13-01', '2026-00-10', '2026-1-1', '9999-12-31', '10000-01-01', '+275760-09-13', '-000001-01-01', '2026-03-01T00:00:00Z',
  '2026-03-01T24:00:00Z', '2026-03-01T23:59:60Z', '2026-03-01T00:00:00.123456789Z', '2026-03-01T00:00:00+99:99', '2026-03-01T00:00:00-00:00',
  '2026-03-01t00:00:00z', '2026-03-01 00:00:00Z', '2026-03-01T00:00:00+0100', '2026-03-01T00:00Z', '20260301', '2026-03-01garbage', '\u0000', '\t',
  '\u00e9', '\u00df', '\u0130', '\u212a', '\ud83d\ude00', '\ufeff', '\u202e', '\u200b', 'a'.repeat(1000),
];

// prettier-ignore
export const KNOWN_NAMES = [
  'as_of', 'latest', 'date_from', 'date_to', 'limit', 'cursor', 'generation', 'format', 'columns', 'decision_from', 'decision_to', 'step', 'window',
  'release', 'max_age', 'before_floor', 'country', 'bidding_zone', 'basin', 'geography', 'region_type', 'region_id', 'callback', 'key', 'api_key',
  '__proto__', 'constructor', 'toString', 'hasOwnProperty',
];

/** The valid values a parameter takes (for one dataset), or none when it has no such thing. */
export function validValues(name: string, d: FuzzDataset): readonly string[] {
  switch (name) {
    case 'as_of':
      return ['2026-03-01', '2025-06-30', '2026-11-20', '2026-03-01T12:00:00Z', '2026-03-01T12:00:00.123+02:00', '2021-01-01T00:00:00-05:00'];
    case 'date_from':
    case 'date_to':
    case 'decision_from':
    case 'decision_to':
      return ['2026-02-01', '2026-03-01', '2026-03-10', '2025-12-31', '2021-01-04'];
    case 'latest':
      return ['true', 'false'];
    case 'limit':
      return ['1', '2', '10', '200', '10000'];
    case 'step':
      return ['1', '7', '366'];
    case 'window':
      return ['0', '30', '90', '3660'];
    case 'release':
      return ['all', 'first'];
    case 'format':
      return ['json', 'csv', 'arrow'];
    case 'generation':
      return ['1'];
    case 'columns':
      return [d.columns.slice(-2).join(','), d.columns.at(-1) ?? 'date', 'date'];
    default:
      return d.filters.get(name) ?? [];
  }
}

const hex = (b: number, upper: boolean): string => '%' + (upper ? b.toString(16).toUpperCase() : b.toString(16)).padStart(2, '0');

/** Characters that are never written raw in a query: they would end the target, the pair or the request line. */
const NEVER_RAW = new Set([' ', '\r', '\n', '\t', '\0', '#', '&', '=', '\u007f']);

/**
 * How a value (or name) is written into the query string: percent-encoded as a browser
 * does, as forms do ('+' for space), every byte encoded (in either case), safe characters
 * raw and the rest encoded, raw UTF-8 bytes in the request line, or with a stray '%'.
 */
export const encoding = fc.constantFrom('component', 'plus', 'every-byte', 'every-byte-lower', 'raw', 'raw-bytes', 'stray-percent');

export function encode(s: string, how: string): string {
  const bytes = Buffer.from(s, 'utf8');
  switch (how) {
    case 'component':
      return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'));
    case 'plus':
      return encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd')).replaceAll('%20', '+');
    case 'every-byte':
    case 'every-byte-lower':
      return Array.from(bytes, (b) => hex(b, how === 'every-byte')).join('');
    case 'raw':
      // Printable ASCII raw (percent signs and all: a value may be meant as an escape), the rest encoded.
      return Array.from(bytes, (b) => (b > 0x20 && b < 0x7f && !NEVER_RAW.has(String.fromCharCode(b)) ? String.fromCharCode(b) : hex(b, true))).join('');
    case 'raw-bytes':
      // Bytes above 0x7f raw in the request line (written as latin1 by the client).
      return Array.from(bytes, (b) => (b > 0x20 && !NEVER_RAW.has(String.fromCharCode(b)) ? String.fromCharCode(b) : hex(b, true))).join('');
    default: {
      const e = encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '\ufffd'));
      const at = e.length === 0 ? 0 : bytes[0]! % (e.length + 1);
      return e.slice(0, at) + '%' + e.slice(at);
    }
  }
}

/** An adversarial value: tricky constants, any unicode, huge numbers, long runs, a valid value spoiled. */
export function adversarial(valid: readonly string[]): fc.Arbitrary<string> {
  const spoiled =
    valid.length === 0
      ? fc.constant('x')
      : fc
          .tuple(
            fc.constantFrom(...valid),
            fc.nat(),
            fc.constantFrom('', ' ', '\u0000', 'x', '9', '-', ':', '%', ',', '\u00e9', '\ud83d\ude00'),
            fc.constantFrom('replace', 'insert', 'cut', 'repeat', 'case'),
          )
          .map(([v, i, c, op]) => {
            const at = v.length === 0 ? 0 : i % v.length;
            if (op === 'replace') return v.slice(0, at) + c + v.slice(at + 1);
            if (op === 'insert') return v.slice(0, at) + c + v.slice(at);
            if (op === 'cut') return v.slice(0, at);
            if (op === 'repeat') return `${v},${v}`;
            return v.toUpperCase();
          });
  return fc.oneof(
    { arbitrary: fc.constantFrom(...TRICKY), weight: 4 },
    { arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }), weight: 2 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 24 }), weight: 2 },
    { arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 24 }), weight: 2 },
    { arbitrary: fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String), weight: 1 },
    { arbitrary: fc.double().map(String), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: 1800 }).map((n) => '9'.repeat(n)), weight: 1 },
    { arbitrary: spoiled, weight: 4 },
  );
}

/** A parameter value for `name`: valid (when it has valid values) or adversarial. */
export function valueFor(name: string, d: FuzzDataset): fc.Arbitrary<string> {
  const valid = validValues(name, d);
  const filterList =
    valid.length > 0 && d.filters.has(name) ? fc.subarray([...valid], { minLength: 1, maxLength: Math.min(3, valid.length) }).map((v) => v.join(',')) : null;
  const options: Array<fc.WeightedArbitrary<string>> = [{ arbitrary: adversarial(valid), weight: 3 }];
  if (valid.length > 0) options.push({ arbitrary: fc.constantFrom(...valid), weight: 3 });
  if (filterList !== null) options.push({ arbitrary: filterList, weight: 2 });
  return fc.oneof(...options);
}
