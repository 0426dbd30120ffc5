import { describe, expect, it } from 'vitest';
import type { PageMeta } from '../src/format/resolved-page.js';
import { CanonicalText } from '../src/query/canonical-text.js';
import { fnv1a } from '../src/query/hash.js';
import { normalisedText, RequestKey, type KeyParts } from '../src/cache/request-key.js';
import { ResponseCache } from '../src/cache/response-cache.js';

type Parts = [dataset: string, generation: number, canonical: string, format: string, columns: string, encoding: string | null, cursor: string | null];

const BASE: Parts = ['pemi/grid_stress', 7, 'pemi\u0001grid_stress\u0001A\u000119000\u000119090\u0001100\u00011640995200000000\u0001', 'json', '*', null, null];
const partsOf = (p: Parts): KeyParts => ({ dataset: p[0], generation: p[1], canonical: p[2], format: p[3], columns: p[4], encoding: p[5], cursor: p[6] });
const key = (p: Parts): RequestKey => new RequestKey().fill(partsOf(p));
/** BASE with part i replaced. */
const withPart = (i: number, v: Parts[number]): Parts => BASE.map((x, j) => (j === i ? v : x)) as Parts;
/** One other value for each part. */
const OTHER: Parts = ['pemi/grid_strain', 8, `${BASE[2]}x`, 'csv', 'date,value', 'gzip', 'Q1'];

/** The text the hashes are of: `${dataset}\u0001${normalisedText(parts)}`. */
const joined = (k: KeyParts): string => `${k.dataset}\u0001${normalisedText(k)}`;

describe('RequestKey: the normalised request, hashed from its parts', () => {
  it('joins every part with U+0001, absent parts empty (normalisedText)', () => {
    expect(normalisedText({ canonical: 'c', format: 'json', columns: '*', encoding: null, cursor: null })).toBe('c\u0001json\u0001*\u0001\u0001');
    expect(normalisedText({ canonical: 'c', format: 'csv', columns: 'a,b', encoding: 'gzip', cursor: 'Q1' })).toBe('c\u0001csv\u0001a,b\u0001gzip\u0001Q1');
  });

  it('hashes exactly what joining the parts would give (the ETags of earlier versions stay valid): FNV-1a from the offset basis and from the second seed', () => {
    const cases: Parts[] = [
      BASE,
      ['gbsi_eu/system_stress', 0, '', '', '', null, null],
      ['glmi/marginality', 4_294_967_295, 'a\u00e9\u4e2d', 'csv', 'a,b', 'br', 'Zm9v_-'],
    ];
    for (let i = 0; i < 7; i++) cases.push(withPart(i, OTHER[i]!));
    for (const p of cases) {
      const k = key(p);
      expect([k.hashA, k.hashB]).toEqual([fnv1a(joined(k)), fnv1a(joined(k), 0x9e3779b9)]);
    }
  });

  it('every part but the generation changes both hashes (the ETag names the generation in clear)', () => {
    const base = key(BASE);
    for (const i of [0, 2, 3, 4, 5, 6]) {
      const other = key(withPart(i, OTHER[i]!));
      expect(other.hashA, `part ${i}`).not.toBe(base.hashA);
      expect(other.hashB, `part ${i}`).not.toBe(base.hashB);
    }
    // The generation is named in clear by the ETag, not hashed; the cache's slot mixes it in.
    const next = key(withPart(1, 8));
    expect([next.hashA, next.hashB]).toEqual([base.hashA, base.hashB]);
    expect(next.slot).not.toBe(base.slot);
  });

  it('matches only the very request: each part compared', () => {
    const base = key(BASE);
    expect(base.matches(key(BASE))).toBe(true);
    for (let i = 0; i < 7; i++) expect(base.matches(key(withPart(i, OTHER[i]!))), `part ${i}`).toBe(false);
    expect(key(withPart(5, '')).matches(base)).toBe(false);
    expect(key(withPart(6, '')).matches(base)).toBe(false);
  });

  it("counts the characters of its joined text (dataset, generation, normalised text): what an entry weighs in the cache's bound", () => {
    for (const p of [BASE, OTHER, withPart(1, 0), withPart(1, 10), withPart(1, 4_294_967_295), withPart(5, 'gzip')]) {
      const k = key(p);
      expect(k.length).toBe(`${k.dataset}\u0001${k.generation}\u0001${normalisedText(k)}`.length);
    }
  });

  it('a copy keeps its parts and hashes when the original is refilled', () => {
    const k = key(BASE);
    const copy = k.copy();
    const hashes = [k.hashA, k.hashB, k.slot];
    k.fill(partsOf(OTHER));
    expect(copy.matches(key(BASE))).toBe(true);
    expect([copy.hashA, copy.hashB, copy.slot]).toEqual(hashes);
  });
});

describe("RequestKey filled with the thread's canonical text (a query parsed into a scratch)", () => {
  /** BASE's canonical text written as the parser writes it. */
  const text = (): CanonicalText =>
    new CanonicalText().begin('pemi').part('grid_stress').part('A').num(19000).num(19090).num(100).num(1640995200000000).num(null);

  it('hashes, weighs and matches as the same key filled with the string', () => {
    expect(text().take()).toBe(BASE[2]);
    const t = text();
    for (const p of [BASE, withPart(3, 'csv'), withPart(5, 'gzip'), withPart(6, 'Q1')]) {
      const fromText = new RequestKey().fill({ dataset: p[0], generation: p[1], canonical: t, format: p[3], columns: p[4], encoding: p[5], cursor: p[6] });
      const fromString = key(p);
      expect([fromText.hashA, fromText.hashB, fromText.slot, fromText.length]).toEqual([
        fromString.hashA,
        fromString.hashB,
        fromString.slot,
        fromString.length,
      ]);
      expect(fromText.matches(fromString)).toBe(true);
      expect(fromString.matches(fromText)).toBe(true);
      expect(fromText.matches(key(withPart(2, OTHER[2]!)))).toBe(false);
    }
  });

  it('a copy holds the text as a string, so rewriting the text (the next parse) leaves it as it was', () => {
    const t = text();
    const k = new RequestKey().fill({
      dataset: BASE[0],
      generation: BASE[1],
      canonical: t,
      format: BASE[3],
      columns: BASE[4],
      encoding: BASE[5],
      cursor: BASE[6],
    });
    const copy = k.copy();
    expect(copy.canonical).toBe(BASE[2]);
    t.begin('pemi').part('grid_stress').part('L');
    expect(copy.matches(key(BASE))).toBe(true);
    expect(
      copy.matches(k.fill({ dataset: BASE[0], generation: BASE[1], canonical: t, format: BASE[3], columns: BASE[4], encoding: BASE[5], cursor: BASE[6] })),
    ).toBe(false);
    expect([copy.hashA, copy.hashB]).toEqual([key(BASE).hashA, key(BASE).hashB]);
  });
});

describe('ResponseCache: requests whose slots collide', () => {
  /** Two requests of one dataset and generation with the same slot, found by a birthday search (deterministic). */
  function collision(): [RequestKey, RequestKey] {
    const seen = new Map<number, number>();
    const k = new RequestKey();
    for (let i = 0; ; i++) {
      const s = k.fill({ dataset: 'pemi/grid_stress', generation: 3, canonical: `q${i}`, format: 'json', columns: '*', encoding: null, cursor: null }).slot;
      const j = seen.get(s);
      if (j !== undefined) return [key(['pemi/grid_stress', 3, `q${j}`, 'json', '*', null, null]), k.copy()];
      seen.set(s, i);
    }
  }
  const meta = (productId: string): PageMeta => ({
    productId,
    count: 1,
    totalCount: 1,
    nextCursor: null,
    generation: 3,
    dataLatestDate: null,
    maxObservedUs: null,
    asOfUs: null,
    floorApplied: false,
    extensionKeys: [],
    extensionValues: [],
  });

  it('never serves one the head of the other: a kept head answers only its own request, and the other takes its place', () => {
    const [a, b] = collision();
    expect(a.slot).toBe(b.slot);
    expect(a.matches(b)).toBe(false);
    const cache = new ResponseCache(1 << 20);
    cache.set(a, { meta: meta('a'), shape: null }, new Uint8Array([1]));
    expect(cache.get(a)?.meta.productId).toBe('a');
    expect(cache.get(b)).toBeUndefined();
    cache.set(b, { meta: meta('b'), shape: null }, new Uint8Array([2]));
    expect(cache.get(b)?.meta.productId).toBe('b');
    expect(cache.get(a)).toBeUndefined();
    expect(cache.stats()).toMatchObject({ hits: 2, misses: 2, entries: 1 });
  });
});
