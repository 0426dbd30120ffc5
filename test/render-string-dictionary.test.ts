import { describe, expect, it } from 'vitest';
import { jsonLiterals } from '../src/format/json/json-literals.js';
import { buildStringDictionary, compareUtf8 } from '../src/store/string-dictionary.js';
import { rng } from './support/rng.js';

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The JSON writer's literal of one value (built from the dictionary on first use). */
function literalOf(dict: ReturnType<typeof buildStringDictionary>, code: number): Uint8Array {
  const lit = jsonLiterals(dict);
  return lit.bytes.subarray(lit.offsets[code]!, lit.offsets[code + 1]!);
}

function utf8Of(dict: ReturnType<typeof buildStringDictionary>, code: number): Buffer {
  return Buffer.from(dict.utf8.subarray(dict.utf8Offsets[code]!, dict.utf8Offsets[code + 1]!));
}

/** WTF-8: UTF-8 where a lone surrogate is encoded like any other BMP code point. */
function wtf8(s: string): Buffer {
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    let cp = s.charCodeAt(i);
    const next = s.charCodeAt(i + 1);
    if (cp >= 0xd800 && cp <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      cp = 0x10000 + (cp - 0xd800) * 0x400 + (next - 0xdc00);
      i++;
    }
    if (cp < 0x80) bytes.push(cp);
    else if (cp < 0x800) bytes.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) bytes.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else bytes.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return Buffer.from(bytes);
}

function expectRanksFollow(values: string[], compare: (a: string, b: string) => number): void {
  const dict = buildStringDictionary(values);
  const byRank = [...values.keys()].sort((a, b) => dict.rank[a]! - dict.rank[b]!).map((c) => values[c]!);
  const expected = [...values].sort(compare);
  expect(byRank).toEqual(expected);
}

describe('buildStringDictionary, and its JSON literals (jsonLiterals)', () => {
  const controls = Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(c));
  const values = [
    '',
    'plain',
    'say "hi"',
    'back\\slash',
    '\\"',
    ...controls.map((c) => `a${c}b`),
    '\x7f',
    'é',
    '中文',
    '😀 emoji',
    '\u2028\u2029',
    '\ud800',
    '\udfff',
    'a\ud83d',
    '\ude00b',
    '\ud83d\ude00',
    '1.0',
  ];
  const dict = buildStringDictionary(values);

  it('renders every value as valid UTF-8 JSON that parses back to the same string', () => {
    for (let c = 0; c < values.length; c++) {
      const text = strictUtf8.decode(literalOf(dict, c));
      expect(JSON.parse(text), JSON.stringify(values[c])).toBe(values[c]);
    }
  });

  it('never leaves a raw control byte (0x00-0x1f) in a literal', () => {
    for (let c = 0; c < values.length; c++) {
      expect(literalOf(dict, c).some((byte) => byte < 0x20)).toBe(false);
    }
  });

  it('escapes lone surrogates as \\uDXXX instead of replacing them', () => {
    expect(strictUtf8.decode(literalOf(dict, values.indexOf('\ud800')))).toBe('"\\ud800"');
    expect(strictUtf8.decode(literalOf(dict, values.indexOf('a\ud83d')))).toBe('"a\\ud83d"');
  });

  it('passes non-ASCII through as UTF-8 bytes', () => {
    expect(Buffer.from(literalOf(dict, values.indexOf('é'))).equals(Buffer.from('"é"', 'utf8'))).toBe(true);
    expect(Buffer.from(literalOf(dict, values.indexOf('😀 emoji'))).equals(Buffer.from('"😀 emoji"'))).toBe(true);
  });

  it('maps every value to its index in codeOf and keeps arrays on shared memory', () => {
    values.forEach((v, c) => expect(dict.codeOf.get(v)).toBe(c));
    expect(dict.utf8.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(dict.utf8Offsets.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(dict.rank.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(dict.utf8Offsets.length).toBe(values.length + 1);
    expect(jsonLiterals(dict).offsets.length).toBe(values.length + 1);
  });

  it('holds each value as its UTF-8 bytes (a lone surrogate as U+FFFD, as TextEncoder writes it)', () => {
    const encoder = new TextEncoder();
    for (let c = 0; c < values.length; c++) expect(utf8Of(dict, c).equals(Buffer.from(encoder.encode(values[c]!))), JSON.stringify(values[c])).toBe(true);
    expect(utf8Of(dict, values.indexOf('\ud800')).equals(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(true);
  });

  it('builds the literals once per dictionary (the JSON writer reuses them) and bounds their length', () => {
    const lit = jsonLiterals(dict);
    expect(jsonLiterals(dict)).toBe(lit);
    let longest = 0;
    for (let c = 0; c < values.length; c++) longest = Math.max(longest, literalOf(dict, c).length);
    expect(lit.maxBytes).toBe(longest);
  });

  it('refuses duplicate values', () => {
    expect(() => buildStringDictionary(['a', 'b', 'a'])).toThrow(/distinct/);
  });

  it('handles an empty dictionary', () => {
    const empty = buildStringDictionary([]);
    expect(empty.rank.length).toBe(0);
    expect(empty.utf8Offsets[0]).toBe(0);
    expect(jsonLiterals(empty).offsets[0]).toBe(0);
    expect(jsonLiterals(empty).maxBytes).toBe(0);
  });
});

describe('buildStringDictionary: rank is UTF-8 byte order', () => {
  it('puts an astral character after high BMP characters, unlike JS string order', () => {
    const values = ['😀', '\uFFFD', '\uE000', 'b', 'a', '', 'ab', '\uD7FF', 'z😀', 'z\uFFFF'];
    // JS order disagrees on this pair: that is the point.
    expect('😀' < '\uFFFD').toBe(true);
    expectRanksFollow(values, (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    const dict = buildStringDictionary(values);
    expect(dict.rank[0]!).toBeGreaterThan(dict.rank[1]!);
  });

  it('agrees with Buffer.compare of UTF-8 bytes on random well-formed strings', () => {
    const r = rng(11);
    const alphabet = ['a', 'b', 'é', '\u00ff', '中', '\uD7FF', '\uE000', '\uFFFD', '\uFFFF', '😀', '𐀀', '\u{10FFFF}'];
    const set = new Set<string>();
    while (set.size < 2000) {
      let s = '';
      const len = Math.floor(r() * 5);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(r() * alphabet.length)];
      set.add(s);
    }
    expectRanksFollow([...set], (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  });

  it('orders lone surrogates as their WTF-8 bytes, a strict total order', () => {
    const r = rng(5);
    const alphabet = ['a', '\ud83d', '\ude00', '\ud800', '\udfff', '\uE000', '\uFFFD', '😀', '\ud7ff'];
    const set = new Set<string>();
    while (set.size < 1500) {
      let s = '';
      const len = Math.floor(r() * 6);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(r() * alphabet.length)];
      set.add(s);
    }
    const values = [...set];
    // Distinct WTF-8 encodings only: ties (e.g. '\ud83d'+'\ude00' vs '😀') are the same string.
    expectRanksFollow(values, (a, b) => Buffer.compare(wtf8(a), wtf8(b)));
    expect(new Set(buildStringDictionary(values).rank).size).toBe(values.length);
  });

  it('compareUtf8 is zero only for equal strings and antisymmetric', () => {
    const xs = ['', 'a', '😀', '\uFFFD', '\ud83d', '\ude00', 'a\ud83d', 'a😀'];
    for (const x of xs) {
      for (const y of xs) {
        const c = compareUtf8(x, y);
        expect(c === 0).toBe(x === y);
        expect(Math.sign(c) + Math.sign(compareUtf8(y, x))).toBe(0);
      }
    }
  });
});
