import { describe, expect, it } from 'vitest';
import { etagOf, ifNoneMatchHits, writeEtag } from '../src/format/etag.js';
import { fnv1a } from '../src/query/hash.js';
import { HeaderWriter } from '../src/format/header-writer.js';
import { headerBlockPairs, ownedBlock } from '../src/http/header-block.js';
import { normalisedText, RequestKey } from '../src/cache/request-key.js';

const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

describe('HeaderWriter: headers as one byte block (http/header-block.ts)', () => {
  it('the first header is the name, its value starts the block, every further one is a CRLF line `name: value`', () => {
    const h = new HeaderWriter();
    h.start('vary').ascii('Accept, Accept-Encoding');
    h.start('x-count').int(91);
    h.start('x-data-latest-date').date(20_514);
    h.start('x-data-age-hours').float(12.5);
    const block = h.block();
    expect(block.first).toBe('vary');
    expect(text(block.rest)).toBe('Accept, Accept-Encoding\r\nx-count: 91\r\nx-data-latest-date: 2026-03-02\r\nx-data-age-hours: 12.5');
    // uWS writes `first: rest\r\n`: exactly these lines on the wire.
    expect(`${block.first}: ${text(block.rest)}\r\n`).toBe(
      'vary: Accept, Accept-Encoding\r\nx-count: 91\r\nx-data-latest-date: 2026-03-02\r\nx-data-age-hours: 12.5\r\n',
    );
    expect(headerBlockPairs(block)).toEqual([
      ['vary', 'Accept, Accept-Encoding'],
      ['x-count', '91'],
      ['x-data-latest-date', '2026-03-02'],
      ['x-data-age-hours', '12.5'],
    ]);
  });

  it('reset starts a new block in the same buffer; ownedBlock copies what must outlive it', () => {
    const h = new HeaderWriter();
    h.start('a').ascii('1');
    h.start('b').ascii('2');
    const owned = ownedBlock(h.block());
    h.reset();
    h.start('c').int(3);
    expect(headerBlockPairs(h.block())).toEqual([['c', '3']]);
    expect(headerBlockPairs(owned)).toEqual([
      ['a', '1'],
      ['b', '2'],
    ]);
  });

  it('a block with no header is a programming error, and so is a line without `name: `', () => {
    expect(() => new HeaderWriter().block()).toThrow(/no header/);
    for (const rest of ['1\r\nbad', '1\r\n: no name', '1\r\nx:y'])
      expect(() => headerBlockPairs({ first: 'a', rest: Buffer.from(rest, 'latin1') }), rest).toThrow(/malformed header line/);
  });

  it('grows past its first kilobyte without losing a byte', () => {
    const h = new HeaderWriter();
    const expected: Array<[string, string]> = [];
    for (let i = 0; i < 60; i++) {
      const name = `x-header-with-a-rather-long-name-${i}`;
      const value = 'v'.repeat(i);
      h.start(name).ascii(value);
      expected.push([name, value]);
    }
    expect(h.block().rest.byteLength).toBeGreaterThan(2048);
    expect(headerBlockPairs(h.block())).toEqual(expected);
  });

  it('integers, floats and dates read as String(), toString(36) and the contract date', () => {
    const ints = [0, 7, 10, 99, 123_456_789, 2 ** 53 - 1, -42];
    const floats = [0.5, 1 / 3, 1e-6, 123.456, 2 ** 53 + 2, 0.1 + 0.2];
    const b36 = [0, 9, 10, 35, 36, 1295, 1296, 0x7fffffff, 0xffffffff, 0x80000000];
    const h = new HeaderWriter();
    for (const n of ints) h.start('i').int(n);
    for (const x of floats) h.start('f').float(x);
    for (const n of b36) h.start('b').base36(n);
    h.start('d').date(0).ascii(' ').date(-1).ascii(' ').date(2_932_896);
    const values = headerBlockPairs(h.block()).map(([, v]) => v);
    expect(values).toEqual([...ints.map(String), ...floats.map(String), ...b36.map((n) => n.toString(36)), '1970-01-01 1969-12-31 9999-12-31']);
  });

  it('the ETag is the generation and two FNV-1a hashes of dataset U+0001 normalised request: stable across versions, so clients keep their 304s', () => {
    const key = new RequestKey().fill({
      dataset: 'pemi/grid_stress',
      generation: 7,
      canonical: 'q',
      format: 'json',
      columns: '*',
      encoding: 'br',
      cursor: null,
    });
    const text = 'pemi/grid_stress\u0001q\u0001json\u0001*\u0001br\u0001';
    expect(`pemi/grid_stress\u0001${normalisedText(key)}`).toBe(text);
    expect(etagOf(key)).toBe(`W/"g7-${fnv1a(text).toString(36)}${fnv1a(text, 0x9e3779b9).toString(36)}"`);
  });

  it('If-None-Match: `*` with spaces around it, and a strong tag compared as sent', () => {
    expect(ifNoneMatchHits(' * ', 'W/"g1-x"')).toBe(true);
    expect(ifNoneMatchHits('"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('W/"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('"ab"', '"abc"')).toBe(false);
  });

  it('writeEtag writes exactly etagOf: the 304 check compares the string, every answer carries the digits', () => {
    const keys = [
      new RequestKey().fill({ dataset: 'pemi/grid_stress', generation: 7, canonical: 'q', format: 'json', columns: '*', encoding: 'br', cursor: null }),
      new RequestKey().fill({ dataset: 'gbsi_eu/system_stress', generation: 0, canonical: '', format: '', columns: '', encoding: null, cursor: null }),
      new RequestKey().fill({
        dataset: 'glmi/marginality',
        generation: 4_294_967_295,
        canonical: 'a\u0001b\u0001\u00e9',
        format: 'csv',
        columns: 'a,b',
        encoding: 'gzip',
        cursor: 'Q1',
      }),
    ];
    for (const key of keys) {
      const h = new HeaderWriter();
      writeEtag(h, key);
      expect(headerBlockPairs(h.block())).toEqual([['etag', etagOf(key)]]);
    }
  });
});
