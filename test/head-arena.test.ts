import { describe, expect, it } from 'vitest';
import { encodeHead } from '../src/format/encoded-body.js';
import type { PageMeta } from '../src/format/resolved-page.js';
import type { Mutable } from '../src/mutable.js';
import { InstantMicros, type ExtensionValue } from '../src/format/resolved-page.js';
import { HEAD_PAGE_BYTES, HeadArena } from '../src/cache/head-arena.js';
import { RequestKey } from '../src/cache/request-key.js';
import { ResponseCache } from '../src/cache/response-cache.js';
import { pageMeta } from './support/page-meta.js';
import { rng } from './support/rng.js';

function bytesOf(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7 + (i >>> 8)) & 0xff;
  return b;
}

/** Byte equality without vitest's per-element diffing (heads are tens of KB). */
function same(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** The head read back at 0 and, as a hit with a prefix places it, at an odd offset: equal bytes, nothing around it written. */
function readBack(arena: HeadArena, first: number, n: number): Uint8Array {
  const out = new Uint8Array(n + 16).fill(0xee);
  arena.copyOut(first, n, out);
  // Nothing past the head is written.
  expect(out.subarray(n).every((b) => b === 0xee)).toBe(true);
  const shifted = new Uint8Array(n + 29).fill(0xee);
  arena.copyOut(first, n, shifted, 13);
  expect(shifted.subarray(0, 13).every((b) => b === 0xee) && shifted.subarray(13 + n).every((b) => b === 0xee)).toBe(true);
  expect(same(shifted.subarray(13, 13 + n), out.subarray(0, n))).toBe(true);
  return out.subarray(0, n);
}

const META: PageMeta = pageMeta();

describe('HeadArena (the response cache bytes: fixed pages, allocated once)', () => {
  it('gives back exactly the bytes stored, for sizes around page boundaries', () => {
    const arena = new HeadArena(64 * HEAD_PAGE_BYTES);
    for (const n of [0, 1, 63, 64, 65, HEAD_PAGE_BYTES - 1, HEAD_PAGE_BYTES, HEAD_PAGE_BYTES + 1, 3 * HEAD_PAGE_BYTES + 17]) {
      const src = bytesOf(n, n);
      const first = arena.store(src);
      expect(arena.freePages).toBe(64 - HeadArena.pagesFor(n));
      expect(readBack(arena, first, n)).toEqual(src);
      arena.release(first);
      expect(arena.freePages).toBe(64);
    }
  });

  it('keeps every live head intact while others are stored and released in any order', () => {
    const arena = new HeadArena(40 * HEAD_PAGE_BYTES);
    const random = rng(11);
    const int = (lo: number, hi: number): number => lo + Math.floor(random() * (hi - lo + 1));
    const live: { first: number; src: Uint8Array }[] = [];
    for (let step = 0; step < 600; step++) {
      const n = int(0, 5 * HEAD_PAGE_BYTES);
      while (arena.freePages < HeadArena.pagesFor(n)) {
        const [gone] = live.splice(int(0, live.length - 1), 1);
        arena.release(gone!.first);
      }
      live.push({ first: arena.store(bytesOf(n, step)), src: bytesOf(n, step) });
      const used = live.reduce((s, h) => s + HeadArena.pagesFor(h.src.byteLength), 0);
      expect(arena.freePages).toBe(40 - used);
      if (step % 50 === 0) for (const h of live) expect(same(readBack(arena, h.first, h.src.byteLength), h.src), `step ${step}`).toBe(true);
    }
    for (const h of live) expect(same(readBack(arena, h.first, h.src.byteLength), h.src)).toBe(true);
  });

  it('stores a range of its source: the bytes between start and end, across page boundaries', () => {
    const arena = new HeadArena(8 * HEAD_PAGE_BYTES);
    const src = bytesOf(3 * HEAD_PAGE_BYTES + 50, 5);
    for (const [start, end] of [
      [0, src.length],
      [7, src.length - 3],
      [HEAD_PAGE_BYTES + 1, 2 * HEAD_PAGE_BYTES + 9],
      [40, 40],
    ] as const) {
      const first = arena.store(src, start, end);
      expect(arena.freePages).toBe(8 - HeadArena.pagesFor(end - start));
      expect(same(readBack(arena, first, end - start), src.subarray(start, end))).toBe(true);
      arena.release(first);
    }
  });

  it('tells a chain of consecutive pages (one view holds it) from a scattered one', () => {
    const arena = new HeadArena(6 * HEAD_PAGE_BYTES);
    // A fresh arena hands its pages out in order: 0-1, 2-3, 4-5.
    const a = arena.store(bytesOf(2 * HEAD_PAGE_BYTES - 5, 1));
    const b = arena.store(bytesOf(HEAD_PAGE_BYTES + 1, 2));
    const c = arena.store(bytesOf(2 * HEAD_PAGE_BYTES, 3));
    expect([a, b, c]).toEqual([0, 2, 4]);
    expect([arena.runOffset(a, 2), arena.runOffset(b, 2), arena.runOffset(c, 2)]).toEqual([0, 2 * HEAD_PAGE_BYTES, 4 * HEAD_PAGE_BYTES]);
    // Freed a, then c: the free list is 4, 5, 0, 1. Three pages are 4, 5, 0: not a run.
    arena.release(a);
    arena.release(c);
    const scattered = arena.store(bytesOf(3 * HEAD_PAGE_BYTES - 1, 4));
    expect(arena.runOffset(scattered, 3)).toBe(-1);
    // Its first two pages are consecutive: what a caller asks about is the pages it names.
    expect(arena.runOffset(scattered, 2)).toBe(4 * HEAD_PAGE_BYTES);
    expect(same(readBack(arena, scattered, 3 * HEAD_PAGE_BYTES - 1), bytesOf(3 * HEAD_PAGE_BYTES - 1, 4))).toBe(true);
    // A one-page head is a run wherever it is; an empty head has no pages.
    const one = arena.store(bytesOf(10, 5));
    expect(arena.runOffset(one, 1)).toBe(one * HEAD_PAGE_BYTES);
    expect(arena.runOffset(arena.store(new Uint8Array(0)), 0)).toBe(-1);
  });

  it('refuses a head larger than its free pages', () => {
    const arena = new HeadArena(2 * HEAD_PAGE_BYTES);
    expect(() => arena.store(new Uint8Array(2 * HEAD_PAGE_BYTES + 1))).toThrow(RangeError);
    expect(arena.freePages).toBe(2);
  });
});

/** A JSON request for `canonical` (the cache's key; everything else fixed). */
const key = (canonical: string): RequestKey =>
  new RequestKey().fill({ dataset: 'gbsi_eu/system_stress', generation: 1, canonical, format: 'json', columns: '*', encoding: null, cursor: null });

describe('ResponseCache over its HeadArena', () => {
  it('evicts least recently used heads when whole pages run out before the byte bound', () => {
    // 4 pages; heads of 1,000 bytes count about 1,300 bytes against the bound (room for 12), but take a page each.
    const cache = new ResponseCache(4 * HEAD_PAGE_BYTES);
    const heads = Array.from({ length: 6 }, (_, i) => bytesOf(1000, i));
    for (let i = 0; i < 6; i++) {
      cache.set(key(`k${i}`), { meta: META, shape: null }, heads[i]!);
      if (i === 3) expect(cache.get(key('k0'))).toBeDefined(); // k0 becomes the most recent: k1 and k2 go first
    }
    const s = cache.stats();
    expect(s).toMatchObject({ stores: 6, evictions: 2, entries: 4 });
    expect(cache.get(key('k1'))).toBeUndefined();
    expect(cache.get(key('k2'))).toBeUndefined();
    for (const k of [0, 3, 4, 5]) {
      const hit = cache.get(key(`k${k}`))!;
      const out = new Uint8Array(hit.bytes);
      cache.copyHead(hit, out);
      expect(out).toEqual(heads[k]);
    }
  });

  it('admits the middle of a body by range, and keeps a copy of the meta it was handed', () => {
    const cache = new ResponseCache(8 * HEAD_PAGE_BYTES);
    const body = bytesOf(5000, 3);
    const asOf = new InstantMicros(1_700_000_000_000_000);
    const meta: Mutable<PageMeta> = { ...META, count: 3, extensionKeys: ['generation', 'as_of'], extensionValues: [1, asOf] };
    const k = key('ranged');
    cache.admit(k, { meta: meta, shape: null }, body, 100, 4100);
    expect(cache.stats().declined).toBe(1); // asked for the first time
    cache.admit(k, { meta: meta, shape: null }, body, 100, 4100);
    // The caller refills its scratch for the next request: what was kept does not change.
    meta.count = 9;
    asOf.us = 0;
    (meta.extensionValues as ExtensionValue[])[0] = 2;
    const hit = cache.get(k)!;
    expect(hit.bytes).toBe(4000);
    const out = new Uint8Array(hit.bytes);
    cache.copyHead(hit, out);
    expect(same(out, body.subarray(100, 4100))).toBe(true);
    expect(hit.meta.count).toBe(3);
    expect(hit.meta.extensionKeys).toEqual(['generation', 'as_of']);
    expect(hit.meta.extensionValues).toEqual([1, new InstantMicros(1_700_000_000_000_000)]);
  });

  it("puts a hit together in the arena: the head where it is kept and the suffix in its last page's spare end", () => {
    const cache = new ResponseCache(8 * HEAD_PAGE_BYTES);
    const head = bytesOf(2 * HEAD_PAGE_BYTES - 100, 6);
    const next = bytesOf(HEAD_PAGE_BYTES, 7);
    cache.set(key('run'), { meta: META, shape: null }, head);
    cache.set(key('next'), { meta: META, shape: null }, next);
    const hit = cache.get(key('run'))!;
    expect(hit).toMatchObject({ at: 0, room: 100 });
    for (const n of [100, 37, 0, 99]) {
      const suffix = bytesOf(n, 100 + n);
      const whole = cache.bodyWith(hit, suffix)!;
      // Not a copy: a view of the arena where the head is kept, exactly head + this suffix.
      expect(whole.byteOffset).toBe(hit.at);
      expect(whole.byteLength).toBe(head.byteLength + n);
      expect(same(whole.subarray(0, head.byteLength), head) && same(whole.subarray(head.byteLength), suffix), `suffix of ${n}`).toBe(true);
    }
    // The spare end is the head's own: the head after it is untouched by its suffixes.
    const other = cache.get(key('next'))!;
    const back = new Uint8Array(other.bytes);
    cache.copyHead(other, back);
    expect(same(back, next)).toBe(true);
    // One byte more than the spare end: the caller copies instead.
    expect(cache.bodyWith(hit, new Uint8Array(101))).toBeNull();
  });

  it('puts no hit together in the arena for an encoded head or one in scattered pages', () => {
    const zipped = new ResponseCache(6 * HEAD_PAGE_BYTES);
    zipped.set(key('gz'), { meta: META, shape: null }, encodeHead(bytesOf(3000, 1), 'gzip'));
    const gz = zipped.get(key('gz'))!;
    expect(gz.at).toBe(-1);
    expect(zipped.bodyWith(gz, new Uint8Array(1))).toBeNull();
    // x, y, z take pages 0-1, 2-3, 4-5; y is asked for. A 3-page head then evicts x and z, the
    // least recently used, whose pages go back in that order (the free list is 4, 5, 0, 1), and takes 4, 5, 0.
    const cache = new ResponseCache(6 * HEAD_PAGE_BYTES);
    for (const [i, k] of ['x', 'y', 'z'].entries()) cache.set(key(k), { meta: META, shape: null }, bytesOf(HEAD_PAGE_BYTES + 100, i));
    expect(cache.get(key('y'))).toBeDefined();
    const head = bytesOf(2 * HEAD_PAGE_BYTES + 100, 5);
    cache.set(key('wide'), { meta: META, shape: null }, head);
    expect(cache.stats()).toMatchObject({ evictions: 2, entries: 2 });
    const wide = cache.get(key('wide'))!;
    expect(wide).toMatchObject({ first: 4, at: -1, room: HEAD_PAGE_BYTES - 100 });
    expect(cache.bodyWith(wide, new Uint8Array(8))).toBeNull();
    const back = new Uint8Array(wide.bytes);
    cache.copyHead(wide, back);
    expect(same(back, head)).toBe(true);
    // y kept its run.
    expect(cache.get(key('y'))).toMatchObject({ first: 2, at: 2 * HEAD_PAGE_BYTES });
  });

  it('finds an entry again by a request text it answered, of its generation only, and counts that as a hit of the most recent', () => {
    // Two 1-page entries fill a 2-page arena; a third evicts the least recently used.
    const cache = new ResponseCache(2 * HEAD_PAGE_BYTES);
    cache.set(key('a'), { meta: META, shape: null }, bytesOf(100, 1));
    cache.set(key('b'), { meta: META, shape: null }, bytesOf(100, 2));
    const a = cache.get(key('a'))!;
    cache.get(key('b'));
    cache.remember(a, '/gbsi_eu/system_stress', 'q=a', '*/*', '');
    expect(cache.recall({ path: '/gbsi_eu/system_stress', rawQuery: 'q=a', accept: '*/*', acceptEncoding: '' }, 2, 'gbsi_eu/system_stress')).toBeUndefined();
    // Another key text of the dataset (its floor or filters changed): not this entry.
    expect(
      cache.recall({ path: '/gbsi_eu/system_stress', rawQuery: 'q=a', accept: '*/*', acceptEncoding: '' }, 1, 'gbsi_eu/system_stress\u0001x'),
    ).toBeUndefined();
    expect(cache.recall({ path: '/gbsi_eu/system_stress', rawQuery: 'q=a', accept: '*/*', acceptEncoding: '' }, 1, 'gbsi_eu/system_stress')).toBe(a);
    const hits = cache.stats().hits;
    cache.counted(a);
    expect(cache.stats()).toMatchObject({ hits: hits + 1, remembered: 1 });
    // a was counted after b was asked for: b is the one to go, and with it nothing remembered.
    cache.set(key('c'), { meta: META, shape: null }, bytesOf(100, 3));
    expect(cache.get(key('b'))).toBeUndefined();
    expect(cache.get(key('a'))).toBe(a);
    // a leaves too: its text is forgotten with it.
    cache.set(key('d'), { meta: META, shape: null }, bytesOf(100, 4));
    cache.set(key('e'), { meta: META, shape: null }, bytesOf(100, 5));
    expect(cache.recall({ path: '/gbsi_eu/system_stress', rawQuery: 'q=a', accept: '*/*', acceptEncoding: '' }, 1, 'gbsi_eu/system_stress')).toBeUndefined();
    expect(cache.stats().remembered).toBe(0);
  });

  it("keeps a hit's headers as its own copy, for that entry only", () => {
    const cache = new ResponseCache(4 * HEAD_PAGE_BYTES);
    cache.set(key('a'), { meta: META, shape: null }, bytesOf(10, 1));
    cache.set(key('b'), { meta: META, shape: null }, bytesOf(10, 2));
    const rest = new TextEncoder().encode('W/"g1-x"\r\nx-count: 1');
    cache.keepHeaders(cache.get(key('a'))!, { first: 'etag', rest });
    // The writer's buffer is reused by the next answer: what was kept does not change with it.
    rest.fill(0x21);
    const kept = cache.get(key('a'))!.headers!;
    expect(kept.first).toBe('etag');
    expect(Buffer.from(kept.rest).toString('latin1')).toBe('W/"g1-x"\r\nx-count: 1');
    expect(cache.get(key('b'))!.headers).toBeNull();
  });

  it('gives its pages back when an entry is replaced, and keeps an encoded head with its CRC and length', () => {
    const cache = new ResponseCache(4 * HEAD_PAGE_BYTES);
    const plain = bytesOf(3000, 1);
    const encoded = encodeHead(plain, 'gzip');
    for (let round = 0; round < 10; round++) cache.set(key('same'), { meta: META, shape: null }, round % 2 === 0 ? plain : encoded);
    expect(cache.stats()).toMatchObject({ stores: 10, evictions: 0, entries: 1 });
    const hit = cache.get(key('same'))!;
    expect(hit.encoding).toBe('gzip');
    if (hit.encoding !== 'gzip') return;
    expect({ crc: hit.crc, length: hit.length, bytes: hit.bytes }).toEqual({ crc: encoded.crc, length: 3000, bytes: encoded.bytes.byteLength });
    const out = new Uint8Array(hit.bytes);
    cache.copyHead(hit, out);
    expect(out).toEqual(new Uint8Array(encoded.bytes));
    // Three more 3,000-byte heads fit in the 3 pages the replaced entries gave back.
    for (let i = 0; i < 3; i++) cache.set(key(`other${i}`), { meta: META, shape: null }, plain);
    expect(cache.stats()).toMatchObject({ evictions: 0, entries: 4 });
  });
});
