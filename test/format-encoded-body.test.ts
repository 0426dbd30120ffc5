import { execFileSync } from 'node:child_process';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  encodeHead,
  encodeHeadAsync,
  finishEncoded,
  GZIP_HEADER_BYTES,
  prefixSize,
  tailSize,
  wrapHead,
  type EncodedHead,
  type Encoding,
} from '../src/format/encoded-body.js';
import { rng } from './support/rng.js';

function decode(encoding: Encoding, body: Uint8Array): Buffer {
  return encoding === 'gzip' ? zlib.gunzipSync(body) : zlib.brotliDecompressSync(body);
}

/** prefix + head + tail as the response cache assembles it: the head's bytes placed at prefixSize, then wrapHead. */
function wrapped(head: EncodedHead, prefix: Uint8Array, tail: Uint8Array): Uint8Array {
  const size = head.bytes.byteLength;
  const out = new Uint8Array(prefixSize(head.encoding, prefix.byteLength) + size + tailSize(head.encoding, tail.byteLength));
  out.set(head.bytes, prefixSize(head.encoding, prefix.byteLength));
  expect(wrapHead(head, size, prefix, tail, out)).toBe(out.byteLength); // the sizes are exact
  return out;
}

function whole(head: EncodedHead, tail: Uint8Array): Uint8Array {
  const out = new Uint8Array(head.bytes.byteLength + tailSize(head.encoding, tail.byteLength));
  const n = finishEncoded(head, tail, out);
  expect(n).toBe(out.byteLength); // tailSize is exact
  return out;
}

/** JSON-like text (compressible) or random bytes (not), of a given size. */
function sample(rand: () => number, n: number, compressible: boolean): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = compressible ? '{"date":"2026-03-02","v":0.125},'.charCodeAt(i % 32) ^ (rand() < 0.05 ? 1 : 0) : (rand() * 256) | 0;
  return b;
}

describe('encoded head + per-request tail', () => {
  const rand = rng(7);
  const cases: Array<[Encoding, number, number, boolean]> = [];
  for (const encoding of ['gzip', 'br'] as const)
    for (const headBytes of [0, 1, 1000, 70_000, 300_000])
      for (const tailBytes of [0, 1, 300, 65_535, 65_536, 140_000]) cases.push([encoding, headBytes, tailBytes, headBytes % 2 === 0]);

  it.each(cases)('%s: head %i bytes + tail %i bytes decodes to exactly head + tail', (encoding, headBytes, tailBytes, compressible) => {
    const head = sample(rand, headBytes, compressible);
    const tail = sample(rand, tailBytes, true);
    const body = whole(encodeHead(head, encoding), tail);
    expect(Buffer.compare(decode(encoding, body), Buffer.concat([head, tail]))).toBe(0);
  });

  it('one encoded head serves many tails (a cache hit re-encodes nothing)', () => {
    const head = sample(rand, 50_000, true);
    for (const encoding of ['gzip', 'br'] as const) {
      const h = encodeHead(head, encoding);
      const before = Buffer.from(h.bytes);
      for (const t of ['"metadata":{"record_id":"req_a"}}', '"metadata":{"record_id":"req_bb"}}']) {
        const tail = Buffer.from(t);
        expect(decode(encoding, whole(h, tail)).toString()).toBe(Buffer.from(head).toString() + t);
      }
      expect(Buffer.compare(Buffer.from(h.bytes), before)).toBe(0);
    }
  });

  it('the async encoder (thread pool) gives the same decoded bytes', async () => {
    const head = sample(rand, 200_000, true);
    const tail = Buffer.from('tail');
    for (const encoding of ['gzip', 'br'] as const) {
      const h = await encodeHeadAsync(head, encoding);
      expect(Buffer.compare(decode(encoding, whole(h, tail)), Buffer.concat([head, tail]))).toBe(0);
    }
  });

  it('a real gzip(1) decodes it (trailer CRC and length checked by the tool)', () => {
    const head = sample(rand, 120_000, true);
    const tail = sample(rand, 70_000, true);
    const out = execFileSync('gzip', ['-dc'], { input: whole(encodeHead(head, 'gzip'), tail), maxBuffer: 1 << 24 });
    expect(Buffer.compare(out, Buffer.concat([head, tail]))).toBe(0);
    // A wrong CRC is caught by the tool: the trailer is really checked.
    const bad = whole(encodeHead(head, 'gzip'), tail);
    bad[bad.length - 8]! ^= 1;
    expect(() => execFileSync('gzip', ['-dc'], { input: bad, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 24 })).toThrow();
  });

  it('levels are honoured: a higher level compresses text smaller', () => {
    const head = Buffer.from(
      Array.from({ length: 3000 }, (_, i) => `{"date":"2026-03-${String((i % 28) + 1).padStart(2, '0')}","value":${((i * 7919) % 1000) / 8}}`).join(','),
    );
    expect(encodeHead(head, 'br', { gzip: 1, br: 11 }).bytes.byteLength).toBeLessThan(encodeHead(head, 'br', { gzip: 1, br: 0 }).bytes.byteLength);
    expect(encodeHead(head, 'gzip', { gzip: 9, br: 3 }).bytes.byteLength).toBeLessThan(encodeHead(head, 'gzip', { gzip: 1, br: 3 }).bytes.byteLength);
  });

  it('compresses: a compressible head shrinks', () => {
    const head = sample(rand, 100_000, true);
    for (const encoding of ['gzip', 'br'] as const) expect(encodeHead(head, encoding).bytes.byteLength).toBeLessThan(head.byteLength / 4);
  });
});

describe('per-request prefix + encoded head + tail (gzip)', () => {
  const rand = rng(11);
  const cases: Array<[number, number, number]> = [];
  for (const prefixBytes of [1, 8, 65_535, 65_536, 140_001])
    for (const headBytes of [0, 1, 9000, 300_000]) for (const tailBytes of [0, 70]) cases.push([prefixBytes, headBytes, tailBytes]);

  it.each(cases)('prefix %i bytes + head %i bytes + tail %i bytes gunzips to exactly their concatenation (CRC-32 and length checked)', (p, n, t) => {
    const prefix = sample(rand, p, p % 2 === 0);
    const head = sample(rand, n, true);
    const tail = sample(rand, t, true);
    expect(Buffer.compare(zlib.gunzipSync(wrapped(encodeHead(head, 'gzip'), prefix, tail)), Buffer.concat([prefix, head, tail]))).toBe(0);
  });

  it('the prefix rides in stored blocks right after the gzip header; the head is the same bytes, its header moved to the front', () => {
    const head = encodeHead(sample(rand, 20_000, true), 'gzip');
    const prefix = sample(rand, 100, true);
    const body = wrapped(head, prefix, new Uint8Array(0));
    expect(Buffer.compare(body.subarray(0, GZIP_HEADER_BYTES), head.bytes.subarray(0, GZIP_HEADER_BYTES))).toBe(0);
    // BFINAL=0, BTYPE=00, LEN, NLEN, the prefix's bytes as they are.
    expect([...body.subarray(GZIP_HEADER_BYTES, GZIP_HEADER_BYTES + 5)]).toEqual([0, 100, 0, 0xff - 100, 0xff]);
    expect(Buffer.compare(body.subarray(GZIP_HEADER_BYTES + 5, GZIP_HEADER_BYTES + 105), prefix)).toBe(0);
    const rest = head.bytes.subarray(GZIP_HEADER_BYTES);
    expect(Buffer.compare(body.subarray(GZIP_HEADER_BYTES + 105, GZIP_HEADER_BYTES + 105 + rest.byteLength), rest)).toBe(0);
  });

  it('one encoded head serves many prefixes and tails; gzip(1) checks the combined CRC (a wrong one fails)', () => {
    const bytes = sample(rand, 120_000, true);
    const head = encodeHead(bytes, 'gzip');
    for (const [p, t] of [
      ['schema of request a', 'end a'],
      ['a longer schema of request bb', ''],
    ] as const) {
      const body = wrapped(head, Buffer.from(p), Buffer.from(t));
      const out = execFileSync('gzip', ['-dc'], { input: body, maxBuffer: 1 << 24 });
      expect(out.toString('latin1')).toBe(p + Buffer.from(bytes).toString('latin1') + t);
      body[body.length - 8]! ^= 1;
      expect(() => execFileSync('gzip', ['-dc'], { input: body, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 24 })).toThrow();
    }
  });

  it('an empty prefix writes exactly what finishEncoded writes (JSON and CSV keep their bytes)', () => {
    for (const encoding of ['gzip', 'br'] as const) {
      const head = encodeHead(sample(rand, 5000, true), encoding);
      const tail = Buffer.from(',"metadata":{}}');
      expect(Buffer.compare(wrapped(head, new Uint8Array(0), tail), whole(head, tail))).toBe(0);
    }
  });

  it('brotli refuses a prefix before an encoded head', () => {
    const head = encodeHead(sample(rand, 5000, true), 'br');
    expect(() => prefixSize('br', 1)).toThrow(RangeError);
    expect(() => wrapHead(head, head.bytes.byteLength, Buffer.from('x'), new Uint8Array(0), new Uint8Array(1 << 16))).toThrow(RangeError);
  });
});
