import { execFileSync } from 'node:child_process';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeHead, encodeHeadAsync, finishEncoded, tailSize, type EncodedHead, type Encoding } from '../src/format/encoded-body.js';
import { rng } from './support/rng.js';

function decode(encoding: Encoding, body: Uint8Array): Buffer {
  return encoding === 'gzip' ? zlib.gunzipSync(body) : zlib.brotliDecompressSync(body);
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
