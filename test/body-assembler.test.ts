import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeHead } from '../src/format/encoded-body.js';
import type { PageMeta, RequestStamp } from '../src/format/resolved-page.js';
import { ArrowFormatWriter } from '../src/format/arrow/arrow-writer.js';
import { CsvFormatWriter } from '../src/format/csv/csv-writer.js';
import { JsonFormatWriter } from '../src/format/json/json-writer.js';
import { ByteWriter } from '../src/format/bytes/byte-writer.js';
import { BodyAssembler } from '../src/cache/body-assembler.js';
import { RequestIds } from '../src/api/request-ids.js';
import { HEAD_PAGE_BYTES } from '../src/cache/head-arena.js';
import { RequestKey } from '../src/cache/request-key.js';
import { ResponseCache } from '../src/cache/response-cache.js';
import { pageMeta } from './support/page-meta.js';
import { rng } from './support/rng.js';

const META: PageMeta = pageMeta();
const key = (canonical: string): RequestKey =>
  new RequestKey().fill({ dataset: 'gbsi_eu/system_stress', generation: 1, canonical, format: 'json', columns: '*', encoding: null, cursor: null });
const text = (s: string): Uint8Array => new TextEncoder().encode(s);
const filler = (n: number, c: string): string => c.repeat(n);

/** A cache holding one identity head `middle` (in one run of pages), and its hit. */
function kept(middle: string) {
  const cache = new ResponseCache(16 * HEAD_PAGE_BYTES);
  cache.set(key('q'), { meta: META, shape: null }, text(middle));
  return { cache, hit: cache.get(key('q'))! };
}
const decode = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

describe('ResponseCache.restampedBody (a hit sent as the previous hit of its entry left it)', () => {
  const middle = `[${filler(HEAD_PAGE_BYTES - 500, 'r')}]`;
  const asOfMeta: PageMeta = { ...META, totalCount: 41, maxObservedUs: 1_600_000_000_000_000, asOfUs: 1_700_000_000_000_000 };
  const ids = new RequestIds(new Uint8Array(8));
  const stampOf = (retrievedAtUs: number): RequestStamp => ({ retrievedAtUs, recordId: Buffer.from(ids.advance()) });
  const suffixOf = (writer: JsonFormatWriter | CsvFormatWriter, stamp: RequestStamp): Uint8Array => {
    const out = new ByteWriter(64);
    writer.writeSuffix(out, asOfMeta, stamp);
    return out.view().slice();
  };

  it('rewrites the JSON metadata the last hit left for this stamp, in place, and is nothing before a first hit', () => {
    const cache = new ResponseCache(16 * HEAD_PAGE_BYTES);
    cache.set(key('q'), { meta: asOfMeta, shape: null }, text(middle));
    const hit = cache.get(key('q'))!;
    const json = new JsonFormatWriter();
    expect(cache.restampedBody(hit, json, stampOf(1))).toBeNull();
    cache.bodyWith(hit, suffixOf(json, stampOf(1_750_000_000_000_000)));
    for (const us of [1_760_000_000_000_000, 1_760_000_000_001_000]) {
      const stamp = stampOf(us);
      const body = cache.restampedBody(hit, json, stamp)!;
      expect(body.byteOffset).toBe(hit.at);
      expect(decode(body)).toBe(middle + decode(suffixOf(json, stamp)));
    }
  });

  it('sends an empty suffix (CSV) as it is, and declines one it cannot restamp', () => {
    const cache = new ResponseCache(16 * HEAD_PAGE_BYTES);
    cache.set(key('csv'), { meta: asOfMeta, shape: null }, text(middle));
    const hit = cache.get(key('csv'))!;
    const csv = new CsvFormatWriter();
    cache.bodyWith(hit, suffixOf(csv, stampOf(1)));
    expect(decode(cache.restampedBody(hit, csv, stampOf(2))!)).toBe(middle);
    // A suffix that is not the writer's own (JSON metadata under a CSV writer) is declined.
    cache.bodyWith(hit, suffixOf(new JsonFormatWriter(), stampOf(3)));
    expect(cache.restampedBody(hit, csv, stampOf(4))).toBeNull();
    expect(new ArrowFormatWriter().restampSuffix(new Uint8Array(4), 2, 2)).toBe(true);
    expect(new ArrowFormatWriter().restampSuffix(new Uint8Array(4), 2, 3)).toBe(false);
  });
});

describe('BodyAssembler.hit (a response-cache hit: prefix + kept middle + suffix)', () => {
  const middle = `[${filler(2 * HEAD_PAGE_BYTES - 300, 'r')}]`; // 298 bytes spare in its last page
  const suffix = ',"metadata":{"record_id":"req_1"}}';

  it('without a prefix, an identity middle and its suffix are one view of the arena, not a copy', () => {
    const { cache, hit } = kept(middle);
    const body = new BodyAssembler().hit(cache, hit, new Uint8Array(0), text(suffix));
    expect(decode(body)).toBe(middle + suffix);
    expect(body.byteOffset).toBe(hit.at);
    expect(body.buffer).toBe(cache.bodyWith(hit, new Uint8Array(0))!.buffer);
  });

  it('copies when the suffix outgrows the spare end, with the same bytes', () => {
    const { cache, hit } = kept(middle);
    const long = `,"metadata":{"x":"${filler(300, 'm')}"}}`;
    const body = new BodyAssembler().hit(cache, hit, new Uint8Array(0), text(long));
    expect(decode(body)).toBe(middle + long);
    expect(body.buffer).not.toBe(cache.bodyWith(hit, new Uint8Array(0))!.buffer);
    // A short suffix after it is served from the arena again, with no byte of the long one.
    const short = new BodyAssembler().hit(cache, hit, new Uint8Array(0), text('}'));
    expect(decode(short)).toBe(middle + '}');
  });

  it('copies when there is a prefix (Arrow puts per-request bytes in front of the middle)', () => {
    const { cache, hit } = kept(middle);
    const body = new BodyAssembler().hit(cache, hit, text('PREFIX'), text(suffix));
    expect(decode(body)).toBe('PREFIX' + middle + suffix);
    expect(body.buffer).not.toBe(cache.bodyWith(hit, new Uint8Array(0))!.buffer);
  });

  it('puts an encoded middle together as an uncached answer is, around its kept bytes', () => {
    const cache = new ResponseCache(16 * HEAD_PAGE_BYTES);
    const head = encodeHead(text(middle), 'gzip');
    cache.set(key('gz'), { meta: META, shape: null }, head);
    const bodies = new BodyAssembler();
    const fromCache = Buffer.from(bodies.hit(cache, cache.get(key('gz'))!, new Uint8Array(0), text(suffix)));
    const uncached = Buffer.from(new BodyAssembler().encoded(head, new Uint8Array(0), text(suffix)));
    expect(fromCache.equals(uncached)).toBe(true);
    expect(gunzipSync(fromCache).toString('latin1')).toBe(middle + suffix);
  });

  it('grows its buffer for answers larger than it, in every path', () => {
    // ASCII that compresses little: the encoded head stays over twice the first buffer (64 KiB), as its 400 KB middle does.
    const noise = Buffer.alloc(400_000);
    const random = rng(5);
    for (let i = 0; i < noise.length; i++) noise[i] = 0x30 + Math.floor(random() * 64);
    const big = noise.toString('latin1');
    const cache = new ResponseCache(256 * HEAD_PAGE_BYTES);
    const head = encodeHead(text(big), 'gzip');
    cache.set(key('gz'), { meta: META, shape: null }, head);
    cache.set(key('id'), { meta: META, shape: null }, text(big));
    const prefix = text('PREFIX');
    expect(gunzipSync(new BodyAssembler().hit(cache, cache.get(key('gz'))!, new Uint8Array(0), text(suffix))).toString('latin1')).toBe(big + suffix);
    expect(gunzipSync(new BodyAssembler().encoded(head, new Uint8Array(0), text(suffix))).toString('latin1')).toBe(big + suffix);
    expect(decode(new BodyAssembler().hit(cache, cache.get(key('id'))!, prefix, text(suffix)))).toBe('PREFIX' + big + suffix);
  });
});
