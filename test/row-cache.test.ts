import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_SLOT_COST } from '../src/format/arenas/page-arena.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, startHarness, startInProcessHarness, TEST_KEY, type Harness, type Reply } from './support/harness.js';

const COUNTRIES = ['DE', 'FR', 'NL'];

/** 3 countries x 120 days, revisions on every 7th key (published 10 days late); values carry the generation. */
function rows(generation: number): PitRow[] {
  const out: PitRow[] = [];
  for (let d = 0; d < 120; d++) {
    const day = new Date(Date.UTC(2026, 0, 1 + d));
    const date = day.toISOString().slice(0, 10);
    const late = new Date(day.getTime() + 10 * 86_400_000).toISOString().slice(0, 10);
    for (const [i, country] of COUNTRIES.entries()) {
      const tag = `g${generation}-${country}-${date}`;
      out.push({ date, eff: date, obs: `${date}T06:00:00Z`, key: { country }, tag, value: generation * 1000 + d + i / 10 });
      if (d % 7 === 0) out.push({ date, eff: date, obs: `${late}T06:00:00Z`, key: { country }, tag: `${tag}-rev`, value: -(generation * 1000 + d) });
    }
  }
  return out;
}

const day = (n: number): string => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10);

/**
 * A walk-forward loop as clients run it: [D-30, D] as of D for consecutive D (per country,
 * for two, for all, and a projection), and the walk_forward endpoint over moving decision
 * ranges; every question in JSON and in CSV.
 */
function walkForward(from = 31, to = 71): string[] {
  const paths: string[] = [];
  for (let d = from; d < to; d++) {
    const queries = ['country=DE&', 'country=FR,NL&', '', 'columns=value&'].map(
      (filter) => `/gbsi_eu/system_stress?${filter}date_from=${day(d - 30)}&date_to=${day(d)}&as_of=${day(d)}`,
    );
    if (d % 3 === 0) queries.push(`/gbsi_eu/system_stress/walk_forward?country=DE,NL&decision_from=${day(d - 4)}&decision_to=${day(d)}&window=20`);
    for (const q of queries) paths.push(q, `${q}&format=csv`);
  }
  return paths;
}

/** One request on a fresh connection, so that the kernel picks a serving thread each time. */
function once(url: string): Promise<{ status: number; id: string; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent: false, headers: { 'x-api-key': TEST_KEY, connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-request-id']), text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

const norm = (status: number, text: string): string => {
  expect(status, text).toBe(200);
  return text.replace(/req_[0-9a-z]+/g, 'req_x');
};

/** A server to compare: in process (one serving thread, counters at hand) or two threads over a socket. */
interface Subject {
  readonly name: string;
  readonly h: Harness;
  get(path: string): Promise<string>;
  /** serving threads that answered so far (request id prefixes) */
  readonly threads: Set<string>;
}

function inProcess(name: string, h: Harness): Subject {
  return { name, h, threads: new Set(['0']), get: async (path) => norm(...((r: Reply) => [r.status, r.text] as const)(await h.get(path))) };
}

function twoThreads(name: string, h: Harness): Subject {
  const threads = new Set<string>();
  return {
    name,
    h,
    threads,
    get: async (path) => {
      const r = await once(h.url + path);
      threads.add(r.id.slice(0, 12));
      return norm(r.status, r.text);
    },
  };
}

/** pitcache_cache_events_total of one cache and event, over every serving thread. */
async function cacheEvents(h: Harness, cache: 'row' | 'page', event: string): Promise<number> {
  const text = await h.server.metrics();
  const series = `pitcache_cache_events_total{cache="${cache}",event="${event}"}`;
  const line = text.split('\n').find((l) => l.startsWith(series + ' '));
  expect(line, series).toBeDefined();
  return Number(line!.slice(series.length + 1));
}

/** pitcache_cache_events_total of the row cache, over every serving thread. */
async function rowEvents(h: Harness): Promise<{ hits: number; misses: number; evictions: number; declined: number }> {
  const [hits, misses, evictions, declined] = await Promise.all(['hit', 'miss', 'eviction', 'declined'].map((e) => cacheEvents(h, 'row', e)));
  return { hits: hits!, misses: misses!, evictions: evictions!, declined: declined! };
}

describe('row cache (rendered rows reused by overlapping queries, shared by the serving threads)', () => {
  const datasets = [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], rows(1)) }];
  const ROOMY = 16 * 1024 * 1024;
  let plain: Harness;
  const subjects: Subject[] = [];
  beforeAll(async () => {
    plain = await startInProcessHarness({ datasets, server: { rowCacheBytes: 0 } });
    // Rows kept at once: one slot (every row evicts the last), a few slots, and room for everything.
    const first = 'first' as const;
    for (const rowCacheBytes of [1, 8 * 512, ROOMY])
      subjects.push(
        inProcess(
          `1 thread, ${rowCacheBytes} bytes`,
          await startInProcessHarness({ datasets, server: { rowCacheBytes, rowCacheAdmission: first, pageCacheBytes: 0 } }),
        ),
      );
    for (const rowCacheBytes of [1, ROOMY])
      subjects.push(
        twoThreads(
          `2 threads, ${rowCacheBytes} bytes`,
          await startHarness({ datasets, server: { rowCacheBytes, rowCacheAdmission: first, workers: 2, build: 'worker', pageCacheBytes: 0 } }),
        ),
      );
    // The serving default: rows kept on their second render (row-doorkeeper.ts).
    subjects.push(
      inProcess(
        `1 thread, ${ROOMY} bytes, kept on a second render`,
        await startInProcessHarness({ datasets, server: { rowCacheBytes: ROOMY, pageCacheBytes: 0 } }),
      ),
    );
    subjects.push(
      twoThreads(
        `2 threads, ${ROOMY} bytes, kept on a second render`,
        await startHarness({ datasets, server: { rowCacheBytes: ROOMY, workers: 2, build: 'worker', pageCacheBytes: 0 } }),
      ),
    );
    // Whole pages beside the rows (page-cache.ts): one page slot over one row slot, room for
    // both, and room on two threads.
    subjects.push(inProcess('1 thread, 1 page slot', await startInProcessHarness({ datasets, server: { rowCacheBytes: 1, pageCacheBytes: PAGE_SLOT_COST } })));
    subjects.push(
      inProcess('1 thread, 16 page slots', await startInProcessHarness({ datasets, server: { rowCacheBytes: ROOMY, pageCacheBytes: 16 * PAGE_SLOT_COST } })),
    );
    subjects.push(
      twoThreads(
        '2 threads, 16 page slots',
        await startHarness({ datasets, server: { rowCacheBytes: ROOMY, pageCacheBytes: 16 * PAGE_SLOT_COST, workers: 2, build: 'worker' } }),
      ),
    );
  }, 120_000);
  afterAll(async () => {
    await plain?.close();
    for (const s of subjects) await s.h.close();
  });

  it('answers a walk-forward loop in JSON and CSV byte for byte as the server without it', async () => {
    for (const path of walkForward()) {
      const r = await plain.get(path);
      const want = norm(r.status, r.text);
      for (const s of subjects) expect(await s.get(path), `${s.name}: ${path}`).toBe(want);
    }
    expect(plain.cacheStats().rows).toBeNull();
    const [oneSlot, fewSlots, roomy] = subjects.slice(0, 3).map((s) => s.h.cacheStats().rows!);
    // Consecutive steps share all but a day of rows: with room for them, most rows are copies.
    expect(roomy!.hits).toBeGreaterThan(2 * roomy!.misses);
    expect(roomy!.evictions).toBe(0);
    // One slot: every stored row evicts the one before.
    expect(oneSlot!.slots).toBe(1);
    expect(oneSlot!.evictions).toBeGreaterThan(0);
    expect(fewSlots!.evictions).toBeGreaterThan(0);
    // Two threads, one arena: both answered, and together they rendered each row once, as
    // the single thread did (per-thread copies would render a row once per thread).
    const [two1, twoRoomy, secondOne, secondTwo] = subjects.slice(3);
    expect(two1!.threads.size).toBe(2);
    expect(twoRoomy!.threads.size).toBe(2);
    expect(await rowEvents(twoRoomy!.h)).toEqual({ hits: roomy!.hits, misses: roomy!.misses, evictions: 0, declined: 0 });
    expect((await rowEvents(two1!.h)).evictions).toBeGreaterThan(0);
    // Kept on a second render: a loop's rows come back on its next step, so the arena still
    // answers most rows, at the cost of one more render per row; nothing is evicted.
    const second = secondOne!.h.cacheStats().rows!;
    expect(second.declined).toBeGreaterThan(0);
    expect(second.hits).toBeGreaterThan(2 * second.misses);
    expect(second.misses).toBeGreaterThan(roomy!.misses);
    expect(second.misses).toBeLessThan(2 * roomy!.misses + 1);
    expect(second.evictions).toBe(0);
    // Two threads share the doorkeeper as they share the arena: they render about as often
    // as one thread (hashes of different generation uids may meet for a row or two).
    expect(secondTwo!.threads.size).toBe(2);
    const twoSecond = await rowEvents(secondTwo!.h);
    expect(Math.abs(twoSecond.misses - second.misses)).toBeLessThanOrEqual(Math.ceil(second.misses / 100));
    // /metrics reports what the doorkeeper declined, summed over the threads.
    expect(Math.abs(twoSecond.declined - second.declined)).toBeLessThanOrEqual(Math.ceil(second.declined / 100));
    expect(twoSecond.declined).toBeGreaterThan(0);
    // Pages: consecutive steps of one question copy most of their rows from the step before
    // (a JSON page of the loop is a few runs of the last), on either thread.
    const [pageOne, pageRoomy, pageTwo] = subjects.slice(7);
    const roomyPages = pageRoomy!.h.cacheStats().rows!.pages!;
    const pageRows = pageRoomy!.h.cacheStats().rows!;
    expect(roomyPages.hits).toBeGreaterThan(0.9 * (roomyPages.hits + roomyPages.misses));
    // Every row is copied from a page, copied from the arena or rendered: the same rows as
    // without pages, and over a third of them (the JSON answers of the data endpoint) in runs.
    expect(pageRows.hits + pageRows.misses + roomyPages.rowsCopied).toBe(roomy!.hits + roomy!.misses);
    expect(roomyPages.rowsCopied).toBeGreaterThan(0.3 * (roomy!.hits + roomy!.misses));
    // One slot: the questions of a step take it from each other.
    expect(pageOne!.h.cacheStats().rows!.pages!.evictions).toBeGreaterThan(0);
    expect(pageTwo!.threads.size).toBe(2);
    expect(await cacheEvents(pageTwo!.h, 'page', 'hit')).toBeGreaterThan(0);
  }, 120_000);

  it('never serves a row of a superseded generation', async () => {
    // One-row answers last and first again after the refresh: in a one-slot arena the new
    // generation's row then meets the old generation's text of the same row id in its slot.
    const single = [
      `/gbsi_eu/system_stress?country=FR&date_from=${day(40)}&date_to=${day(40)}`,
      `/gbsi_eu/system_stress?country=FR&date_from=${day(40)}&date_to=${day(40)}&format=csv`,
    ];
    const paths = [...single, ...walkForward(31, 45)];
    for (const s of subjects) for (const path of [...walkForward(31, 45), ...single]) await s.get(path);
    for (const h of [plain, ...subjects.map((s) => s.h)]) {
      await writeGeneration(h.source, datasets[0]!, buildArrowSnapshot(pitSnapshot(['country'], rows(2))), 2, '2026-11-02T00:00:00Z');
      const refresh = await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
      expect(refresh.body.changed).toEqual(['gbsi_eu/system_stress']);
    }
    for (const path of paths) {
      const r = await plain.get(path);
      const want = norm(r.status, r.text);
      // (a columns=value answer has no tag; its values carry the generation too)
      if (!path.includes('columns=')) expect(want).toContain('g2-');
      expect(want).not.toContain('g1-');
      expect(want).not.toMatch(/\b1[01]\d\d(\.\d)?\b/);
      for (const s of subjects) expect(await s.get(path), `${s.name}: ${path}`).toBe(want);
    }
  }, 120_000);
});

describe('bulk pages bypass the row arena (BULK_PAGE_ROWS)', () => {
  const ZONES = Array.from({ length: 12 }, (_, i) => `Z${String(i).padStart(2, '0')}`);
  /** 12 zones x 200 days, every 9th key revised: pages of a few thousand rows. */
  const wide: PitRow[] = [];
  for (let d = 0; d < 200; d++) {
    const date = day(d);
    for (const [i, zone] of ZONES.entries()) {
      wide.push({ date, eff: date, obs: `${date}T06:00:00Z`, key: { country: zone }, tag: `${zone}-${date}`, value: d + i / 100 });
      if ((d + i) % 9 === 0) wide.push({ date, eff: date, obs: `${day(d + 3)}T06:00:00Z`, key: { country: zone }, tag: `${zone}-${date}-rev`, value: -d });
    }
  }
  const datasets = [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], wide) }];
  let plain: Harness;
  let cached: Harness;
  beforeAll(async () => {
    plain = await startInProcessHarness({ datasets, server: { rowCacheBytes: 0 } });
    cached = await startInProcessHarness({ datasets, server: { rowCacheBytes: 16 * 1024 * 1024, rowCacheAdmission: 'first', pageCacheBytes: 0 } });
  }, 60_000);
  afterAll(async () => {
    await plain?.close();
    await cached?.close();
  });

  const same = async (path: string): Promise<void> => {
    const want = await plain.get(path);
    const got = await cached.get(path);
    expect(norm(got.status, got.text), path).toBe(norm(want.status, want.text));
  };
  const counted = (): number => {
    const r = cached.cacheStats().rows!;
    return r.hits + r.misses;
  };

  it('a data page of more rows is written straight, byte for byte as without the arena, and asks nothing of it; smaller pages and walk_forward still do', async () => {
    for (const q of ['latest=false&limit=1200', 'latest=false&as_of=2026-05-01&limit=1100', 'date_from=2026-02-01&date_to=2026-06-01&limit=5000']) {
      for (const f of ['', '&format=csv']) {
        const path = `/gbsi_eu/system_stress?${q}${f}`;
        const before = counted();
        await same(path);
        expect(counted(), path).toBe(before);
      }
    }
    // every page of a chain of bulk pages (2,400 keys in two)
    const first = await cached.get('/gbsi_eu/system_stress?latest=false&limit=1200');
    const before = counted();
    for (const f of ['', '&format=csv'])
      await same(`/gbsi_eu/system_stress?latest=false&limit=1200&cursor=${encodeURIComponent(first.body.next_cursor as string)}${f}`);
    expect(counted()).toBe(before);
    await same('/gbsi_eu/system_stress?latest=false&limit=1000');
    await same('/gbsi_eu/system_stress?latest=false&limit=1000&format=csv');
    expect(counted()).toBe(before + 2 * 1000);
    // walk_forward: a row comes back once per decision date of the answer, so the arena copies it
    const wf = '/gbsi_eu/system_stress/walk_forward?decision_from=2026-03-01&decision_to=2026-03-20&window=10&limit=5000';
    for (const path of [wf, `${wf}&format=csv`]) {
      const hits = cached.cacheStats().rows!.hits;
      await same(path);
      expect(cached.cacheStats().rows!.hits, path).toBeGreaterThan(hits + 1000);
    }
  }, 120_000);
});
