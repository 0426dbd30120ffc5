import { describe, expect, it } from 'vitest';
import type { PageMeta } from '../src/format/resolved-page.js';
import { RequestKey } from '../src/cache/request-key.js';
import { ResponseCache } from '../src/cache/response-cache.js';

/**
 * ResponseCache's admission on its own, driven as a data endpoint drives it (get, and on a
 * miss admit the rendered head). Sizes are as in production relative to each other: 32 KiB
 * answers (a walk-forward answer is about 33 KB) in 16 MiB.
 */
const CACHE_BYTES = 16 * 1024 * 1024;
const BODY = 32 * 1024;
const A = 'wssi_us/demand_shock';
const B = 'gbsi_eu/system_stress';

const meta = (key: string, generation: number): PageMeta => ({
  productId: key,
  count: 1,
  totalCount: 1,
  nextCursor: null,
  generation,
  dataLatestDate: null,
  maxObservedUs: null,
  asOfUs: null,
  floorApplied: false,
  extensionKeys: [],
  extensionValues: [],
});

const encoder = new TextEncoder();
const scratch = new Uint8Array(BODY);
const readBack = new Uint8Array(BODY);

/** A JSON request of `dataset` and generation, all columns, identity: only the canonical query varies. */
const rk = (canonical: string, dataset = A, generation = 1): RequestKey =>
  new RequestKey().fill({ dataset, generation, canonical, format: 'json', columns: '*', encoding: null, cursor: null });

/** What a key's head and meta are marked with: a hit that served another key's bytes would show. */
const mark = (key: RequestKey): string => `${key.dataset}|${key.generation}|${key.canonical}`;

function head(key: RequestKey): Uint8Array {
  scratch.fill(0);
  encoder.encodeInto(mark(key), scratch);
  return scratch;
}

/** One request: look up, and on a miss offer the rendered head. True on a hit. */
function ask(cache: ResponseCache, key: RequestKey): boolean {
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.copyHead(hit, readBack);
    // Buffer.equals, not toEqual: a deep compare of 32 KiB per hit would take minutes here.
    if (!Buffer.from(readBack.buffer).equals(head(key))) expect.fail(`a hit for ${mark(key)} served other bytes`);
    expect(hit.meta.productId).toBe(mark(key));
    return true;
  }
  cache.admit(key, { meta: meta(mark(key), key.generation), shape: null }, head(key));
  return false;
}

/** Keys of one length (a 4-letter tag, 5 digits), so every entry counts the same against the bound. */
const keys = (n: number, tag: string, dataset = A, generation = 1): RequestKey[] =>
  Array.from({ length: n }, (_, i) => rk(`series=${tag}${String(i).padStart(5, '0')}`, dataset, generation));

/** Entries of one BODY and one such key that fit the bound: 32 KiB + 2 bytes per key char + 256 each (response-cache.ts). */
const CAPACITY = Math.floor(CACHE_BYTES / (BODY + 2 * keys(1, 'xxxx')[0]!.length + 256));

function sweep(cache: ResponseCache, set: readonly RequestKey[], rounds: number): number {
  let hits = 0;
  for (let r = 0; r < rounds; r++) for (const k of set) if (ask(cache, k)) hits++;
  return hits;
}

describe('response cache admission (TinyLFU)', () => {
  it("holds as many answers as the bound allows (the arena's pages would hold 512)", () => {
    expect(CAPACITY).toBeGreaterThan(500);
    expect(CAPACITY).toBeLessThan(512);
    const cache = new ResponseCache(CACHE_BYTES);
    sweep(cache, keys(600, 'fill'), 2);
    expect(cache.stats().entries).toBe(CAPACITY);
  });

  it('keeps a working set that fits from its second ask and serves every kept answer on the third, rejecting nothing', () => {
    const cache = new ResponseCache(CACHE_BYTES);
    const set = keys(400, 'fits');
    sweep(cache, set, 2);
    const kept = cache.stats().stores;
    // The doorkeeper is approximate: a key can be forgotten when two others take its slots.
    expect(kept).toBeGreaterThanOrEqual(380);
    expect(sweep(cache, set, 1)).toBe(kept);
    expect(sweep(cache, set, 2)).toBeGreaterThanOrEqual(2 * kept);
    expect(cache.stats()).toMatchObject({ rejected: 0, evictions: 0 });
    expect(cache.stats().entries).toBeGreaterThanOrEqual(kept);
  });

  it.each([1000, 2000, 5000])('under a cyclic sweep of %i queries keeps what it holds and hits capacity / working set (plain LRU: never)', (n) => {
    const cache = new ResponseCache(CACHE_BYTES);
    const set = keys(n, 'sweep');
    sweep(cache, set, 6);
    const warm = cache.stats();
    expect(warm.entries).toBe(CAPACITY);
    const rounds = 6;
    const hits = sweep(cache, set, rounds);
    const after = cache.stats();
    expect(hits / (rounds * n)).toBeGreaterThanOrEqual((0.97 * CAPACITY) / n);
    // Each admission past this point evicts one entry; with LRU admission a cycle wider
    // than the cache admits (then evicts unread) every miss the doorkeeper passes.
    expect(after.evictions - warm.evictions).toBeLessThan(0.005 * rounds * n);
    // Every miss is accounted for: kept, not asked for before (lately), or beaten.
    const d = (k: 'misses' | 'stores' | 'declined' | 'rejected'): number => after[k] - warm[k];
    expect(d('misses')).toBe(d('stores') + d('declined') + d('rejected'));
    expect(d('rejected')).toBeGreaterThan(0);
  });

  /** A full cache of `set`'s keys (kept unconditionally, as an off-thread encoding is), each then asked for `asks` times. */
  function full(set: readonly RequestKey[], asks: number): ResponseCache {
    const cache = new ResponseCache(CACHE_BYTES);
    for (const k of set) cache.set(k, { meta: meta(mark(k), 1), shape: null }, head(k));
    for (let r = 0; r < asks; r++) for (const k of set) expect(ask(cache, k)).toBe(true);
    expect(cache.stats()).toMatchObject({ entries: CAPACITY, evictions: 0 });
    return cache;
  }

  it('lets in a query asked for more often than the least-recently-used entry, in place of that entry', () => {
    const set = keys(CAPACITY, 'once');
    const cache = full(set, 1);
    const hot = keys(1, 'newc')[0]!;
    // Ask 1 is counted 1 and declined (not asked for before); ask 2 counts 2 against the
    // victim's 1 (a lead of 2 is needed); ask 3 counts 3 and is kept in place of the least
    // recently used; ask 4 is a hit.
    const asks: boolean[] = [];
    for (let i = 0; i < 5; i++) asks.push(ask(cache, hot));
    expect(asks).toEqual([false, false, false, true, true]);
    expect(cache.stats()).toMatchObject({ declined: 1, rejected: 1, evictions: 1, entries: CAPACITY });
    expect(cache.get(set[0]!)).toBeUndefined();
    expect(set.slice(1).every((k) => cache.get(k) !== undefined)).toBe(true);
  });

  it("gives a newer generation's answers the places of the same dataset's older ones, however hot those were", () => {
    const gen1 = keys(CAPACITY, 'qqqq');
    const cache = full(gen1, 10);
    const other = keys(CAPACITY, 'qqqq', B, 2);
    for (let r = 0; r < 3; r++) for (const k of other) ask(cache, k);
    // Another dataset's answers, asked for 3 times, do not displace answers asked for 10
    // times (but for a few whose counters all collide with hot keys': a sketch reads high).
    expect(cache.stats().rejected).toBeGreaterThan(1.8 * CAPACITY);
    expect(other.filter((k) => cache.get(k) !== undefined).length).toBeLessThan(0.02 * CAPACITY);
    const sneaked = other.filter((k) => cache.get(k) !== undefined).length;
    const gen2 = keys(CAPACITY, 'qqqq', A, 2);
    for (let r = 0; r < 3; r++) for (const k of gen2) ask(cache, k);
    // Asked for 3 times against answers asked for 10: kept all the same, in the old ones' places.
    expect(gen1.filter((k) => cache.get(k) !== undefined)).toEqual([]);
    expect(gen2.filter((k) => cache.get(k) !== undefined).length).toBe(CAPACITY - sneaked);
  });

  it('lets a warm query in now and then even against a victim that reads hotter (a count-min sketch only ever reads high)', () => {
    // 256 KiB answers: 63 fit, so every entry reaches the 15 counts stop at long before the
    // sketch (8,192 counters) halves, and no newcomer can ever lead one by 2.
    const big = new Uint8Array(256 * 1024);
    const cache = new ResponseCache(CACHE_BYTES);
    const set = keys(63, 'hots');
    for (const k of set) cache.set(k, { meta: meta(mark(k), 1), shape: null }, big);
    for (let r = 0; r < 16; r++) for (const k of set) expect(cache.get(k)).toBeDefined();
    const warm = keys(1, 'newc')[0]!;
    let asks = 0;
    while (cache.get(warm) === undefined && asks < 2000) {
      cache.admit(warm, { meta: meta(mark(warm), 1), shape: null }, big);
      asks++;
    }
    // Only the 1-in-128 draw, from the 6th count on, lets it in: not at once (a fair draw
    // admits within 5 tries 4% of the time; the fixed seed's draws do not), yet in the end.
    expect(asks).toBeGreaterThan(10);
    expect(asks).toBeLessThan(2000);
    expect(cache.stats()).toMatchObject({ declined: 1, rejected: asks - 2, evictions: 1, entries: 63 });
  });

  it('gives a query the draw from its 6th ask on (warm), never before, against a victim it cannot beat', () => {
    // As above: 63 entries of 256 KiB at 15 counts. Then 600 new queries asked for 6 times
    // each, within the sketch's first 5,120 increments (no halving): asks 2-5 are beaten
    // outright, the 6th draws, and about 600/128 win. A query that only lived to its 6th
    // ask stands for all the traffic a warm answer gets before it is asked for a 7th time.
    const big = new Uint8Array(256 * 1024);
    const cache = new ResponseCache(CACHE_BYTES);
    for (const k of keys(63, 'hots')) cache.set(k, { meta: meta(mark(k), 1), shape: null }, big);
    for (let r = 0; r < 16; r++) for (const k of keys(63, 'hots')) expect(cache.get(k)).toBeDefined();
    const storesByAsk = [0, 0, 0, 0, 0, 0];
    for (const k of keys(600, 'warm')) {
      for (let ask = 0; ask < 6; ask++) {
        const before = cache.stats().stores;
        cache.admit(k, { meta: meta(mark(k), 1), shape: null }, big);
        storesByAsk[ask]! += cache.stats().stores - before;
      }
    }
    expect(storesByAsk.slice(0, 5)).toEqual([0, 0, 0, 0, 0]);
    expect(storesByAsk[5]).toBeGreaterThan(0);
    expect(storesByAsk[5]).toBeLessThan(600 / 32);
  });

  it('fills to exactly its bound without comparing: the last answer that fits is kept as the first was', () => {
    // Entries of exactly 32,768 bytes by the bound (body + 2 per key char + 256) and 8 pages
    // each: 4 fill both the byte bound and the arena's 32 pages to the last byte.
    const key = (i: number): RequestKey => keys(1, `exa${i}`)[0]!;
    const bytes = 32_768 - 2 * key(0).length - 256;
    const cache = new ResponseCache(4 * 32_768);
    for (let r = 0; r < 2; r++) for (let i = 0; i < 4; i++) cache.admit(key(i), { meta: meta('exa', 1), shape: null }, new Uint8Array(bytes));
    expect(cache.stats()).toMatchObject({ stores: 4, entries: 4, rejected: 0, evictions: 0, tooLarge: 0 });
    // One head as large as the whole bound is kept too (alone), and one byte more never.
    const whole = new ResponseCache(32_768);
    for (let r = 0; r < 2; r++) whole.admit(key(0), { meta: meta('exa', 1), shape: null }, new Uint8Array(bytes));
    expect(whole.stats()).toMatchObject({ stores: 1, tooLarge: 0 });
    for (let r = 0; r < 2; r++) whole.admit(key(1), { meta: meta('exa', 1), shape: null }, new Uint8Array(bytes + 1));
    whole.set(key(2), { meta: meta('exa', 1), shape: null }, new Uint8Array(bytes + 1));
    expect(whole.stats()).toMatchObject({ stores: 1, tooLarge: 2, entries: 1 });
    expect(whole.get(key(0))).toBeDefined();
  });

  it('keeps an encoding made off-thread at once, full or not, and never a head larger than the bound', () => {
    const cache = new ResponseCache(CACHE_BYTES);
    sweep(cache, keys(600, 'fill'), 2);
    const encoded = keys(1, 'encd')[0]!;
    cache.set(encoded, { meta: meta(mark(encoded), 1), shape: null }, head(encoded));
    expect(ask(cache, encoded)).toBe(true);
    const huge = new Uint8Array(CACHE_BYTES);
    for (let i = 0; i < 3; i++) cache.admit(rk('huge'), { meta: meta('huge', 1), shape: null }, huge);
    expect(cache.get(rk('huge'))).toBeUndefined();
    expect(cache.stats().tooLarge).toBe(2);
  });
});

describe('response cache admission: what the bound counts, and room to spare', () => {
  it('counts an identity head given as a range of a body by the range alone', () => {
    // 40 KiB of middle out of a 100 KiB body, in a 64 KiB cache: it fits; the body would not.
    const cache = new ResponseCache(64 * 1024);
    const key = rk('range');
    const body = new Uint8Array(100 * 1024);
    const start = 50 * 1024;
    const end = start + 40 * 1024;
    encoder.encodeInto(mark(key), body.subarray(start));
    for (let i = 0; i < 2; i++) {
      expect(cache.get(key)).toBeUndefined();
      cache.admit(key, { meta: meta(mark(key), 1), shape: null }, body, start, end);
    }
    const hit = cache.get(key);
    expect(hit?.bytes).toBe(40 * 1024);
    const back = new Uint8Array(hit!.bytes);
    cache.copyHead(hit!, back);
    expect(Buffer.from(back).equals(Buffer.from(body.subarray(start, end)))).toBe(true);
    expect(cache.stats().tooLarge).toBe(0);
  });

  it('while it has room, keeps a head asked for twice however much hotter the oldest entry is', () => {
    const cache = new ResponseCache(CACHE_BYTES);
    const hot = rk('hot');
    for (let i = 0; i < 40; i++) ask(cache, hot);
    expect(cache.stats().entries).toBe(1);
    const cold = rk('cold');
    expect(ask(cache, cold)).toBe(false);
    expect(ask(cache, cold)).toBe(false);
    expect(ask(cache, cold)).toBe(true);
    expect(cache.stats().rejected).toBe(0);
  });
});
