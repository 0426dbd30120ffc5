/**
 * Differential test: random snapshots of every named dataset, and of invented datasets of a
 * catalog.json at the source (contract 13), are served by the real server
 * and every random query (all its pages, followed through the cursor chain) is compared
 * with the naive reference model. Reproduce a failure with the printed seed:
 * PITCACHE_DIFF_SEED=<base seed> npx vitest run test/differential.test.ts
 */
import { Agent, request } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IpcFormat } from '../src/snapshot/arrow-writer.js';
import { ADMIN_KEY, TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { INVENTED_KEYS, writeInventedCatalog } from './support/invented-catalog.js';
import { FLOOR_DATE, Rng, generateSnapshot, type GeneratedSnapshot } from './support/random-snapshot.js';
import { isoDate, randomAsOf, randomFilters } from './support/random-query.js';
import { referenceAnswer, renderCell, type RefAnswer, type RefParams } from './support/reference-model.js';

const BASE_SEED = Number(process.env.PITCACHE_DIFF_SEED ?? 20_261_120);
const QUERIES = Number(process.env.PITCACHE_DIFF_QUERIES ?? 100);
/** A chain longer than this many pages gets a larger limit: keeps the file fast. */
const MAX_PAGES = 25;

/** manySeries: more series than the resolver merges by sweeping dates, so both of its merges are compared. */
const TARGETS: ReadonlyArray<{ productId: string; dataset: string; format: IpcFormat; manySeries?: boolean; invented?: boolean }> = [
  { productId: 'gbsi_us', dataset: 'system_stress', format: 'file' },
  { productId: 'gbsi_us', dataset: 'balance_momentum', format: 'stream' },
  { productId: 'gbsi_us', dataset: 'storage_surprise', format: 'file', manySeries: true },
  { productId: 'gbsi_us', dataset: 'backtest_summary', format: 'file' },
  { productId: 'gbsi_eu', dataset: 'system_stress', format: 'file' },
  { productId: 'pemi', dataset: 'grid_stress', format: 'stream' },
  { productId: 'glmi', dataset: 'marginality', format: 'file' },
  { productId: 'wrsi', dataset: 'forecast_stress', format: 'file' },
  { productId: 'wssi_us', dataset: 'demand_shock', format: 'file' },
  // contract 13: products of the catalog.json at the source, keys of 2 and 0 columns, every value type
  { productId: 'acme_grid', dataset: 'load_by_site', format: 'stream', invented: true },
  { productId: 'flatline', dataset: 'level', format: 'file', invented: true },
];

const snaps = TARGETS.map((t, i) => ({
  ...t,
  snap: generateSnapshot((BASE_SEED + i * 7919) >>> 0, t.productId, t.dataset, {
    manySeries: t.manySeries === true,
    ...(t.invented === true ? { seriesKey: INVENTED_KEYS[t.productId]!, allColumns: true } : {}),
  }),
}));

// One serving thread, and two serving threads over shared memory: the same answers.
describe.each([1, 2])(`differential against the reference model (base seed ${BASE_SEED}), %i serving thread(s)`, (workers) => {
  let h: Harness;
  beforeAll(async () => {
    agent.destroy();
    agent = new Agent({ keepAlive: workers === 1, maxSockets: 1 });
    threadPrefixes.clear();
    h = await startHarness({
      datasets: snaps.map((s) => ({ productId: s.productId, dataset: s.dataset, spec: s.snap.spec, format: s.format })),
      prepare: writeInventedCatalog,
      server: { workers, build: workers > 1 ? 'worker' : 'inline' },
    });
    // A refused snapshot would fail every query with the same 503: say why once, up front.
    const status = await h.get('/admin/status', ADMIN_KEY);
    const refused = (status.body?.datasets ?? []).filter((d: { last_error: unknown }) => d.last_error !== null);
    expect(refused, `snapshots refused at load (base seed ${BASE_SEED}): ${JSON.stringify(refused)}`).toEqual([]);
  });
  afterAll(async () => {
    agent.destroy();
    await h?.close();
  });

  for (const { snap, format } of snaps) {
    const name = `${snap.productId}/${snap.dataset} (${format}, ${snap.rows.length} rows, key [${snap.seriesKey.join(',')}], seed ${snap.seed})`;
    it(name, async () => {
      const rng = new Rng(snap.seed ^ 0x5bd1e995);
      const failures: string[] = [];
      let rows = 0;
      for (let i = 0; i < QUERIES && failures.length < 3; i++) {
        const params = randomParams(rng, snap);
        const reversed = params.date_from !== undefined && params.date_to !== undefined && params.date_from > params.date_to;
        const expected = reversed ? null : referenceAnswer(snap, params, h.clock.now());
        let limit: number | undefined = rng.chance(0.1) ? undefined : rng.pick([1, 2, 3, rng.int(1, 50), rng.int(1, 50), rng.int(1, 50), 200, 10_000]);
        const total = expected?.totalCount ?? 0;
        if (Math.ceil(total / (limit ?? 200)) > MAX_PAGES) limit = Math.ceil(total / MAX_PAGES);
        const query = queryString(rng, params, limit);
        const context = `PITCACHE_DIFF_SEED=${BASE_SEED} (dataset seed ${snap.seed}) query #${i}: GET /${snap.productId}/${snap.dataset}?${query}`;
        const failure = expected === null ? await expect400(h, snap, query) : await checkChain(h, snap, query, limit ?? 200, expected, rng.chance(0.3));
        if (failure !== null) failures.push(`${context}\n  ${failure}`);
        rows += total;
      }
      expect(failures, failures.join('\n\n')).toEqual([]);
      expect(rows).toBeGreaterThan(0);
    });
  }

  it(`every serving thread answered (${workers})`, () => {
    expect(threadPrefixes.size).toBe(workers);
  });
});

async function expect400(h: Harness, snap: GeneratedSnapshot, query: string): Promise<string | null> {
  const r = await getJson(h, `/${snap.productId}/${snap.dataset}?${query}`);
  return r.status === 400 ? null : `expected 400 for date_from > date_to, got ${r.status}: ${r.text.slice(0, 300)}`;
}

// fetch (undici) costs ~1.5 ms a request here, several times the server's own time;
// thousands of requests go through a node:http agent instead. With one serving thread the
// connection is kept alive; with two, every request opens a connection so the kernel spreads
// them over both threads (each thread's record ids carry their own prefix: both are seen).
let agent = new Agent({ keepAlive: true, maxSockets: 1 });
const threadPrefixes = new Set<string>();

interface JsonReply {
  readonly status: number;
  readonly floorApplied: string | undefined;
  readonly text: string;
  readonly body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

function getJson(h: Harness, path: string): Promise<JsonReply> {
  return new Promise((resolve, reject) => {
    const req = request(h.url + path, { agent, headers: { 'x-api-key': TEST_KEY } }, (res) => {
      const id = res.headers['x-request-id'];
      if (typeof id === 'string') threadPrefixes.add(id.slice(0, 12));
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = undefined;
        }
        const floorApplied = res.headers['x-floor-applied'];
        resolve({ status: res.statusCode ?? 0, floorApplied: typeof floorApplied === 'string' ? floorApplied : undefined, text, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Follows the whole cursor chain; returns a description of the first disagreement, or null. */
async function checkChain(h: Harness, snap: GeneratedSnapshot, query: string, limit: number, exp: RefAnswer, cursorFirst: boolean): Promise<string | null> {
  const got: unknown[] = [];
  const names = snap.columns.map((c) => c.name);
  const nowIso = new Date(h.clock.now()).toISOString();
  let cursor: string | null = null;
  for (let page = 0; ; page++) {
    if (page > MAX_PAGES + 5) return `cursor chain did not end after ${page} pages`;
    // Parameter order is not part of a query's identity: the cursor goes first or last.
    const withCursor =
      cursor === null ? query : cursorFirst ? `cursor=${encodeURIComponent(cursor)}&${query}` : `${query}&cursor=${encodeURIComponent(cursor)}`;
    const path = `/${snap.productId}/${snap.dataset}?${withCursor}`;
    const r = await getJson(h, path);
    const at = `page ${page}${cursor === null ? '' : ` (cursor ${cursor})`}`;
    if (r.status !== 200) return `${at}: status ${r.status}: ${r.text.slice(0, 300)}`;
    const b = r.body;
    if (b === undefined) return `${at}: body is not JSON: ${r.text.slice(0, 300)}`;
    const m = b.metadata ?? {};
    const data: unknown[] = Array.isArray(b.data) ? b.data : [];
    const remaining = exp.totalCount - got.length;
    const checks: Array<[string, unknown, unknown]> = [
      ['product_id', b.product_id, snap.productId],
      ['count', b.count, data.length],
      ['data.length', data.length, Math.min(limit, remaining)],
      ['has_more', b.has_more, remaining > limit],
      ['next_cursor present', 'next_cursor' in b, remaining > limit],
      ['metadata.total_count', m.total_count, exp.totalCount],
      ['metadata.data_latest_date', m.data_latest_date, exp.dataLatestDate],
      ['metadata.retrieved_at', m.retrieved_at, nowIso],
      ['metadata.floor_applied', m.floor_applied, exp.floorApplied],
      ['x-floor-applied', r.floorApplied, String(exp.floorApplied)],
      ['metadata.record_id form', /^req_[0-9a-z]{16,}$/.test(String(m.record_id)), true],
    ];
    for (const [what, actual, expected] of checks) {
      if (!isDeepStrictEqual(actual, expected)) return `${at}: ${what} is ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`;
    }
    const age = m.data_age_hours;
    const ageOk = exp.dataAgeHours === null ? age === null : typeof age === 'number' && Math.abs(age - exp.dataAgeHours) < 1e-6;
    if (!ageOk) return `${at}: metadata.data_age_hours is ${JSON.stringify(age)}, expected ${exp.dataAgeHours}`;
    for (const row of data) {
      const keys = Object.keys(row as object);
      if (!isDeepStrictEqual(keys, names)) return `${at}: row columns ${JSON.stringify(keys)}, expected schema order ${JSON.stringify(names)}`;
    }
    got.push(...data);
    if (b.has_more !== true) break;
    if (typeof b.next_cursor !== 'string' || b.next_cursor === '') return `${at}: has_more without a usable next_cursor`;
    cursor = b.next_cursor;
  }
  for (let i = 0; i < Math.max(got.length, exp.rows.length); i++) {
    if (!isDeepStrictEqual(got[i], exp.rows[i])) {
      return (
        `row ${i} of ${exp.rows.length} (page ${Math.floor(i / limit)}) differs\n    expected ${JSON.stringify(exp.rows[i])}\n    actual   ${JSON.stringify(got[i])}` +
        storedVersions(snap, exp.rows[i] ?? got[i])
      );
    }
  }
  return null;
}

/** The stored versions of the key of a rendered row, in snapshot order: what PIT-4 chose among. */
function storedVersions(snap: GeneratedSnapshot, shown: unknown): string {
  if (typeof shown !== 'object' || shown === null) return '';
  const r = shown as Record<string, unknown>;
  const lines = snap.rows.flatMap((row, pos) => {
    const v = snap.columns.map((c) => [c.name, renderCell(c, row[c.name] ?? null)] as const);
    const cell = Object.fromEntries(v);
    if (cell.date !== r.date || snap.seriesKey.some((k) => cell[k] !== r[k])) return [];
    return [`      #${pos} effective ${cell.str_effective_at} observed ${cell.str_observed_at} ingested ${cell.str_ingested_at}`];
  });
  return `\n    stored versions of that key (floor ${FLOOR_DATE[snap.productId]}):\n${lines.join('\n')}`;
}

function queryString(rng: Rng, p: RefParams, limit: number | undefined): string {
  const parts: string[] = [];
  for (const k of ['latest', 'date_from', 'date_to', 'as_of'] as const) {
    const v = p[k];
    if (v !== undefined) parts.push(`${k}=${encodeURIComponent(v)}`);
  }
  // Each value is encoded on its own; the separating commas stay literal.
  for (const [k, v] of Object.entries(p.filters ?? {})) parts.push(`${k}=${v.split(',').map(encodeURIComponent).join(',')}`);
  if (limit !== undefined) parts.push(`limit=${limit}`);
  return rng.shuffle(parts).join('&');
}

function randomParams(rng: Rng, snap: GeneratedSnapshot): RefParams {
  const p: { -readonly [K in keyof RefParams]: RefParams[K] } = {};
  const latest = rng.next();
  if (latest < 0.35) p.latest = 'false';
  else if (latest < 0.5) p.latest = 'true';
  const day = (): number => rng.int(snap.firstDay - 5, snap.lastDay + 5);
  if (rng.chance(0.35)) p.date_from = isoDate(day());
  if (rng.chance(0.45)) p.date_to = isoDate(day());
  if (p.date_from !== undefined && p.date_to !== undefined && p.date_from > p.date_to && rng.chance(0.9)) {
    [p.date_from, p.date_to] = [p.date_to, p.date_from];
  }
  if (p.date_from !== undefined && p.date_to === undefined && rng.chance(0.2)) p.date_to = p.date_from;
  if (rng.chance(0.65)) p.as_of = randomAsOf(rng, snap);
  const filters = randomFilters(rng, snap);
  if (Object.keys(filters).length > 0) p.filters = filters;
  return p;
}
