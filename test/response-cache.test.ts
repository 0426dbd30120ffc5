import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import type { ManualClock } from '../src/time/clock.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, startHarness, startInProcessHarness, type Harness, type Reply } from './support/harness.js';

const COUNTRIES = ['DE', 'FR', 'NL'];

/** 3 countries x 40 days, one revision per 5th key; values carry the generation. */
function rows(generation: number): PitRow[] {
  const out: PitRow[] = [];
  for (let d = 0; d < 40; d++) {
    const date = new Date(Date.UTC(2026, 3, 1 + d)).toISOString().slice(0, 10);
    for (const [i, country] of COUNTRIES.entries()) {
      const tag = `g${generation}-${country}-${date}`;
      out.push({ date, eff: date, obs: `${date}T06:00:00Z`, key: { country }, tag, value: generation * 1000 + d * 10 + i });
      if (d % 5 === 0)
        out.push({ date, eff: date, obs: `${date}T18:00:00Z`, key: { country }, tag: `${tag}-rev`, value: generation * 1000 + d * 10 + i + 0.5 });
    }
  }
  return out;
}

const QUERIES = [
  '',
  'latest=false',
  'latest=false&limit=7',
  'latest=false&limit=8',
  'country=DE',
  'country=FR',
  'country=DE,FR',
  'date_from=2026-04-03&date_to=2026-04-20',
  'date_from=2026-04-03&date_to=2026-04-20&as_of=2026-04-10',
  'date_from=2026-04-03&date_to=2026-04-20&as_of=2026-04-11T12:00:00Z',
  'as_of=2026-04-06',
];

/** A body without the fields that are per request by design. */
function stable(r: Reply): unknown {
  expect(r.status, r.text).toBe(200);
  const { retrieved_at: _r, record_id: _i, data_age_hours: _a, ...meta } = r.body.metadata;
  return { ...r.body, metadata: meta };
}

describe('response cache (keyed by dataset, generation and normalised query)', () => {
  let cached: Harness;
  let plain: Harness;
  const datasets = [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], rows(1)) }];
  beforeAll(async () => {
    cached = await startInProcessHarness({ datasets, server: { responseCacheBytes: 4 * 1024 * 1024 } });
    plain = await startInProcessHarness({ datasets });
  });
  afterAll(async () => {
    await cached?.close();
    await plain?.close();
  });

  it('answers every query, fresh or repeated, exactly as the server without a cache', async () => {
    for (let round = 0; round < 3; round++) {
      for (const q of QUERIES) {
        const a = await cached.get(`/gbsi_eu/system_stress?${q}`);
        const b = await plain.get(`/gbsi_eu/system_stress?${q}`);
        expect(stable(a), `${q} round ${round}`).toEqual(stable(b));
      }
    }
    // Round 1 remembers each query (doorkeeper), round 2 keeps its head, round 3 is served from the cache.
    expect(cached.cacheStats().response).toMatchObject({
      hits: QUERIES.length,
      misses: 2 * QUERIES.length,
      stores: QUERIES.length,
      evictions: 0,
      tooLarge: 0,
      declined: QUERIES.length,
    });
    expect(plain.cacheStats().response).toBeNull();
  });

  it('follows cursor chains page by page from the cache as without it', async () => {
    for (let round = 0; round < 2; round++) {
      let path = '/gbsi_eu/system_stress?latest=false&limit=13';
      let plainPath = path;
      for (let page = 0; page < 20; page++) {
        const a = await cached.get(path);
        const b = await plain.get(plainPath);
        expect(stable(a)).toEqual(stable(b));
        if (!a.body.has_more) break;
        path = `/gbsi_eu/system_stress?latest=false&limit=13&cursor=${a.body.next_cursor}`;
        plainPath = `/gbsi_eu/system_stress?latest=false&limit=13&cursor=${b.body.next_cursor}`;
      }
    }
  });

  it('a hit still writes retrieved_at, record_id and data_age_hours for this request', async () => {
    const clock = cached.clock as ManualClock;
    const first = await cached.get('/gbsi_eu/system_stress?country=NL');
    clock.advance(3_600_000);
    const second = await cached.get('/gbsi_eu/system_stress?country=NL');
    expect(second.body.data).toEqual(first.body.data);
    expect(second.body.metadata.record_id).not.toBe(first.body.metadata.record_id);
    expect(second.body.metadata.record_id).toBe(second.headers.get('x-request-id'));
    expect(Date.parse(second.body.metadata.retrieved_at) - Date.parse(first.body.metadata.retrieved_at)).toBe(3_600_000);
    expect(second.body.metadata.data_age_hours - first.body.metadata.data_age_hours).toBeCloseTo(1, 9);
  });

  it('hits of one entry in a row each carry exactly their own metadata, whatever its length', async () => {
    // A hit writes its metadata into the cached body's spare room: a shorter metadata after a
    // longer one must leave no byte of the earlier one behind.
    const cachedClock = cached.clock as ManualClock;
    const plainClock = plain.clock as ManualClock;
    plainClock.advance(cachedClock.now() - plainClock.now());
    // With an as_of, nothing in the metadata moves but retrieved_at and record_id: a hit
    // restamps those two in what the entry's last hit left (restampEnvelopeMetadata).
    const paths = ['/gbsi_eu/system_stress?country=FR&date_from=2026-04-02', '/gbsi_eu/system_stress?country=NL&as_of=2026-04-12T08:00:00Z'];
    const ids = (r: Reply): unknown => [r.headers.get('x-request-id'), r.body.metadata.record_id];
    const seen = new Set<unknown>();
    for (const step of [0, 1, 3_600_000, 7, 86_400_000 * 400, 1, 0]) {
      cachedClock.advance(step);
      plainClock.advance(step);
      for (const path of paths) {
        const a = await cached.get(path);
        const b = await plain.get(path);
        expect(a.text.replace(/req_[0-9a-z]+/g, 'req_x'), `${path} after +${step} ms`).toBe(b.text.replace(/req_[0-9a-z]+/g, 'req_x'));
        // Each answer's own id, in its header and its body.
        const [header, body] = ids(a) as [string, string];
        expect(body).toBe(header);
        expect(seen.has(body)).toBe(false);
        seen.add(body);
      }
    }
  });

  it('over a real socket, hits sent from where the cache keeps them carry the bytes of fresh answers, hit after hit', async () => {
    // Hits are sent as a view of the cache's arena with this request's metadata written after
    // the kept middle (ResponseCache.bodyWith): alternating entries and metadata of changing
    // length must each reach the client whole, exactly as the server without a cache writes it.
    const overUws = await startHarness({ datasets, server: { responseCacheBytes: 4 * 1024 * 1024 } });
    try {
      const clock = overUws.clock as ManualClock;
      const plainClock = plain.clock as ManualClock;
      plainClock.advance(clock.now() - plainClock.now());
      const paths = [
        '/gbsi_eu/system_stress?latest=false',
        '/gbsi_eu/system_stress?country=DE&latest=false',
        '/gbsi_eu/system_stress?country=FR',
        // With an as_of, a hit restamps the metadata the entry's last hit left in the arena.
        '/gbsi_eu/system_stress?latest=false&as_of=2026-04-20',
        '/gbsi_eu/system_stress?country=NL&as_of=2026-04-12T08:00:00Z',
      ];
      const norm = (r: Reply): string => r.text.replace(/req_[0-9a-z]+/g, 'req_x');
      for (const [i, step] of [0, 1, 3_600_000, 7, 86_400_000 * 400, 1, 13, 0].entries()) {
        clock.advance(step);
        plainClock.advance(step);
        for (const path of paths) {
          // Identity: a compressed hit is put together by copying (BodyAssembler.encoded's CRC and trailer).
          const a = await overUws.get(path, undefined, { headers: { 'accept-encoding': 'identity' } });
          expect(a.headers.get('content-encoding')).toBeNull();
          expect(a.headers.get('content-length')).toBe(String(Buffer.byteLength(a.text)));
          expect(norm(a), `${path}, ask ${i + 1}`).toBe(norm(await plain.get(path)));
        }
      }
      // From the third ask on, each is a hit.
      expect(await overUws.server.metrics()).toContain(`pitcache_cache_events_total{cache="response",event="hit"} ${6 * paths.length}`);
    } finally {
      await overUws.close();
    }
  });

  it('a hit carries the headers of a fresh answer: kept with its entry where nothing in them moves, written where the age or the Link does', async () => {
    const cachedClock = cached.clock as ManualClock;
    const plainClock = plain.clock as ManualClock;
    plainClock.advance(cachedClock.now() - plainClock.now());
    const headersOf = (r: Reply): string[][] => [...r.headers].filter(([name]) => name !== 'x-request-id').sort();
    const paths = [
      ...QUERIES.map((q) => `/gbsi_eu/system_stress?${q}`),
      // One key in two orders, with an as_of (so nothing else in the headers moves): the Link
      // repeats each request's own query.
      '/gbsi_eu/system_stress?as_of=2026-04-10&latest=false&limit=5',
      '/gbsi_eu/system_stress?limit=5&latest=false&as_of=2026-04-10',
      // Immutable (as_of and generation fixed): cache-control says so on hits too.
      '/gbsi_eu/system_stress?as_of=2026-04-06&generation=1',
    ];
    const hitsBefore = cached.cacheStats().response!.hits;
    for (const [round, step] of [0, 3_600_000, 1, 86_400_000, 0].entries()) {
      cachedClock.advance(step);
      plainClock.advance(step);
      for (const path of paths) {
        const a = await cached.get(path);
        expect(headersOf(a), `${path}, round ${round}`).toEqual(headersOf(await plain.get(path)));
      }
    }
    expect(cached.cacheStats().response!.hits - hitsBefore).toBeGreaterThan(3 * paths.length);
    // Without as_of, the age header moved with the clock between hits; with one, it did not.
    const noAsOf = await cached.get('/gbsi_eu/system_stress?country=DE');
    cachedClock.advance(7_200_000);
    const later = await cached.get('/gbsi_eu/system_stress?country=DE');
    expect(Number(later.headers.get('x-data-age-hours')) - Number(noAsOf.headers.get('x-data-age-hours'))).toBeCloseTo(2, 9);
    expect(later.headers.get('link')).toBeNull();
  });

  it('a request asked again in the very same text is answered without parsing, as the whole way answers it', async () => {
    // A fresh cache: its arena hands out consecutive pages, so every identity answer is kept in one run.
    const fresh = await startInProcessHarness({ datasets, server: { responseCacheBytes: 4 * 1024 * 1024 } });
    const cachedClock = fresh.clock as ManualClock;
    const plainClock = plain.clock as ManualClock;
    plainClock.advance(cachedClock.now() - plainClock.now());
    const path = '/gbsi_eu/system_stress?latest=false&as_of=2026-04-20&country=DE,FR';
    const headersOf = (r: Reply): string[][] => [...r.headers].filter(([name]) => name !== 'x-request-id').sort();
    const same = async (init: RequestInit, label: string): Promise<Reply> => {
      const a = await fresh.get(path, undefined, init);
      const b = await plain.get(path, undefined, init);
      expect(a.status, label).toBe(b.status);
      expect(headersOf(a), label).toEqual(headersOf(b));
      expect(a.text.replace(/req_[0-9a-z]+/g, 'req_x'), label).toBe(b.text.replace(/req_[0-9a-z]+/g, 'req_x'));
      return a;
    };

    // Each text on its own: identity JSON, gzip JSON, CSV. Asks 1-2 admit; 3 is a hit the whole
    // way, which leaves its suffix in the arena; 4 restamps it and remembers the text; 5-6 are
    // found by their text. A gzip answer is put together by copying: never found by its text.
    const texts: Array<[RequestInit, string]> = [
      [{ headers: { 'accept-encoding': 'identity' } }, 'identity'],
      [{ headers: { 'accept-encoding': 'gzip' } }, 'gzip'],
      [{ headers: { accept: 'text/csv', 'accept-encoding': 'identity' } }, 'csv'],
    ];
    for (let ask = 1; ask <= 6; ask++) {
      for (const [init, label] of texts) {
        cachedClock.advance(1_000);
        plainClock.advance(1_000);
        const r = await same(init, `${label}, ask ${ask}`);
        if (label === 'gzip') expect(r.headers.get('content-encoding')).toBe('gzip');
        if (label === 'csv') expect(r.headers.get('content-type')).toContain('text/csv');
      }
    }
    expect(fresh.cacheStats().response).toMatchObject({ remembered: 2, hits: 4 * texts.length, misses: 2 * texts.length, stores: texts.length });
    // A conditional request goes the whole way: its ETag still answers 304.
    const etag = (await fresh.get(path, undefined, texts[0]![0])).headers.get('etag')!;
    const conditional = await fresh.get(path, undefined, { headers: { 'accept-encoding': 'identity', 'if-none-match': etag } });
    expect(conditional.status).toBe(304);
    // A new generation: the same text is answered from it, not from what the old one remembered.
    await writeGeneration(fresh.source, datasets[0]!, buildArrowSnapshot(pitSnapshot(['country'], rows(2))), 2, '2026-11-02T00:00:00Z');
    expect((await fresh.get('/admin/refresh', ADMIN_KEY, { method: 'POST' })).body.changed).toEqual(['gbsi_eu/system_stress']);
    const next = await fresh.get(path, undefined, texts[0]![0]);
    expect(next.body.metadata.generation).toBe(2);
    expect((next.body.data as Array<{ tag: string }>).every((row) => row.tag.startsWith('g2-'))).toBe(true);
    await fresh.close();
  });

  it('never serves a body of a superseded generation', async () => {
    for (const q of QUERIES) await cached.get(`/gbsi_eu/system_stress?${q}`);
    await writeGeneration(cached.source, datasets[0]!, buildArrowSnapshot(pitSnapshot(['country'], rows(2))), 2, '2026-11-02T00:00:00Z');
    const refresh = await cached.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
    expect(refresh.body.changed).toEqual(['gbsi_eu/system_stress']);
    for (const q of QUERIES) {
      const r = await cached.get(`/gbsi_eu/system_stress?${q}`);
      expect(r.body.metadata.generation, q).toBe(2);
      for (const row of r.body.data as Array<{ tag: string }>) expect(row.tag.startsWith('g2-'), `${q}: ${row.tag}`).toBe(true);
    }
  });

  it('stays correct when the bound holds less than one body (every entry evicted)', async () => {
    const tiny = await startInProcessHarness({ datasets, server: { responseCacheBytes: 1 } });
    try {
      for (const q of QUERIES) {
        expect(stable(await tiny.get(`/gbsi_eu/system_stress?${q}`)), q).toEqual(stable(await plain.get(`/gbsi_eu/system_stress?${q}`)));
        expect(stable(await tiny.get(`/gbsi_eu/system_stress?${q}`)), q).toEqual(stable(await plain.get(`/gbsi_eu/system_stress?${q}`)));
      }
      // Every second ask is admitted, and its head alone exceeds the bound: nothing is kept or served.
      expect(tiny.cacheStats().response).toMatchObject({
        hits: 0,
        misses: 2 * QUERIES.length,
        stores: 0,
        tooLarge: QUERIES.length,
        declined: QUERIES.length,
        entries: 0,
      });
    } finally {
      await tiny.close();
    }
  });

  it('stays within its bound once full, and gives a query asked for more often the place of the least recently used', async () => {
    const small = await startInProcessHarness({ datasets, server: { responseCacheBytes: 4 * 1024 } });
    try {
      for (let round = 0; round < 2; round++) for (const q of QUERIES) await small.get(`/gbsi_eu/system_stress?${q}`);
      const full = small.cacheStats().response!;
      expect(full.entries).toBeGreaterThan(0);
      expect(full.entries).toBeLessThan(QUERIES.length);
      // Asked for as often as what the cache holds: not kept (TinyLFU), nothing evicted.
      expect(full.rejected).toBeGreaterThan(0);
      expect(full.evictions).toBe(0);
      // The last query, asked for again and again, gains the lead it needs and is kept.
      const last = QUERIES[QUERIES.length - 1]!;
      let asks = 0;
      const before = small.cacheStats().response!.hits;
      while (small.cacheStats().response!.hits === before && asks < 6) {
        expect(stable(await small.get(`/gbsi_eu/system_stress?${last}`))).toEqual(stable(await plain.get(`/gbsi_eu/system_stress?${last}`)));
        asks++;
      }
      const after = small.cacheStats().response!;
      expect(asks).toBeLessThan(6);
      expect(after.evictions).toBeGreaterThan(0);
      expect(after.stores).toBe(after.evictions + after.entries);
      expect(after.entries).toBeLessThan(QUERIES.length);
    } finally {
      await small.close();
    }
  });
});
