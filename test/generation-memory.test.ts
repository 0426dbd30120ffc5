/**
 * What is released is freed (docs/snapshots.md#release): `pitcache serve` as its own
 * process on a folder source, while generations are published into it and a client pages
 * each new one with `?limit=1` (the answer hands out a cursor, so every generation is
 * retained until the --retain-memory budget, one generation here, evicts it). Once the
 * budget is full, each publish evicts one generation. Before each thread collected what it
 * released, every evicted generation stayed in memory, in every thread that had held it:
 * RSS grew by about a generation's bytes per publish.
 *
 * RSS is noisy (the allocator, the JIT, when V8 collects): one reading can be tens of MB
 * off. So the test asks for what only a leak does: RSS climbing with the publishes. Over
 * the measured publishes, the least-squares slope of RSS must stay under a third of a
 * generation per publish (a leak makes it one generation or more), and no reading may pass
 * the highest reading of the warm-up (budget full) by more than 10% plus the caches'
 * bounds plus one generation (the new one, loaded before the old one goes).
 *
 * One serving thread with the caches off, two with the caches on. The soak bench
 * (bench/soak, bench/RESULTS.md) runs the same case over 500 publishes.
 *
 * It takes minutes (a 13 MB generation loaded and built on a worker thread at each of two
 * dozen publishes), too long for `npm test`: it runs when PITCACHE_MEMORY_TEST=1, as
 * `npm run test:memory`, a stage of .ci/run of its own.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, defaultKeysJson } from './support/harness.js';
import { startServeProcess, writeGridStress, type ServeProcess } from './support/serve-process.js';

const ZONES = ['DE-LU', 'FR', 'NL', 'BE', 'AT', 'PL', 'CZ', 'IT-NORD', 'ES', 'DK1', 'DK2', 'NO2', 'SE3', 'FI', 'CH'];
/** days per zone: about 13 MB of table per generation */
const DAYS = 12000;
/** publishes read after the budget is full, before the measured ones: the healthy envelope */
const WARM = 3;
/** publishes measured: each evicts a generation */
const MEASURED = 7;
const MB = 2 ** 20;
/** what the caches may hold when on (flags below); 0 when off */
const CACHE_MB = { response: 2, row: 4, page: 2 };

const day = (d: number): string => new Date(Date.UTC(2015, 0, 1 + d)).toISOString().slice(0, 10);

/** Generation 1's rows: one a day per zone. */
function firstRows(): PitRow[] {
  return ZONES.flatMap((zone, z) =>
    Array.from({ length: DAYS }, (_, d) => ({
      date: day(d),
      eff: day(d),
      obs: `${day(d)}T06:00:00Z`,
      key: { bidding_zone: zone },
      tag: 't',
      value: z * DAYS + d,
    })),
  );
}

/** Generation `g`'s snapshot: generation 1's with every 30th value revised (a recomputation published whole, as `--replace` does). */
function snapshotOf(first: Uint8Array, g: number): Uint8Array {
  const table = tableFromIPC(first);
  for (const chunk of table.getChild('value')!.data) {
    const values = chunk.values as Float64Array;
    for (let i = g % 30; i < values.length; i += 30) values[i] = values[i]! + g;
  }
  return tableToIPC(table, 'file');
}

let dir: string;
let proc: ServeProcess | undefined;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

/** What this test reads of the answers it gets (a data page, /admin/status). */
interface Answer {
  readonly next_cursor?: string;
  readonly metadata: { readonly generation: number };
  readonly retention: { readonly live_bytes: number; readonly generations: readonly unknown[] };
  readonly datasets: ReadonlyArray<{ readonly generation: number }>;
}

async function getJson(url: string, key = TEST_KEY): Promise<Answer> {
  const res = await fetch(url, { headers: { 'x-api-key': key } });
  expect(res.status, url).toBe(200);
  return (await res.json()) as Answer;
}

/**
 * Makes the server load generation `g` now (POST /admin/refresh answers once it is loaded
 * and handed to every serving thread), then pages it with `?limit=1`: the answer's cursor
 * retains it.
 */
async function loadAndPage(url: string, g: number): Promise<void> {
  const res = await fetch(`${url}/admin/refresh`, { method: 'POST', headers: { 'x-api-key': ADMIN_KEY } });
  const refresh = (await res.json()) as { changed: string[] };
  expect([res.status, refresh.changed], `the refresh to generation ${g}`).toEqual([200, ['pemi/grid_stress']]);
  await pageGeneration(url, g);
}

/**
 * Pages the dataset with `?limit=1` until generation `g` answers (a serving thread takes the
 * new generation by message, and a request can reach it a moment before); the bound is
 * only for a broken server.
 */
async function pageGeneration(url: string, g: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const body = await getJson(`${url}/pemi/grid_stress?limit=1`);
    if (body.metadata.generation === g) {
      expect(typeof body.next_cursor).toBe('string');
      return;
    }
    if (Date.now() > deadline) throw new Error(`generation ${g} was not served within a minute`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Time for the build worker to retire (1 s idle) and the threads to collect what they released (on the turn after). */
const settle = (): Promise<void> => new Promise((r) => setTimeout(r, 1500));

async function run(workers: number, caches: boolean): Promise<void> {
  const src = join(dir, `w${workers}-${caches ? 'caches' : 'none'}`);
  const rows = firstRows();
  await writeGridStress(src, rows);
  const first = buildArrowSnapshot(pitSnapshot(['bidding_zone'], rows));
  const source = new LocalSource(join(src, 'src'));
  // Written as a publish writes it (object, history, manifest), without re-planning versions:
  // what is measured is the server, not the publisher.
  // Two recomputations, alternated: each publish is a new generation the server loads whole.
  const variants = [snapshotOf(first, 2), snapshotOf(first, 3)];
  const publishGeneration = async (g: number): Promise<void> => {
    await writeGeneration(source, { productId: 'pemi', dataset: 'grid_stress' }, variants[g % 2]!, g, '2026-11-01T00:00:00Z');
    await loadAndPage(proc!.url, g);
    await settle();
  };
  const cacheArgs = caches
    ? ['--response-cache-mb', String(CACHE_MB.response), '--row-cache-mb', String(CACHE_MB.row), '--page-cache-mb', String(CACHE_MB.page)]
    : ['--response-cache-mb', '0', '--row-cache-mb', '0', '--page-cache-mb', '0'];
  proc = await startServeProcess(
    [
      '--source',
      join(src, 'src'),
      '--keys',
      join(dir, 'keys.json'),
      '--workers',
      String(workers),
      // loaded when the test asks (POST /admin/refresh), not at the next poll
      '--refresh-interval',
      '0',
      '--drain-seconds',
      '0',
      '--datasets',
      'pemi/grid_stress',
      // one superseded generation fits, the next evicts it
      '--retain-memory',
      '18MiB',
      ...cacheArgs,
    ],
    {},
    // a bound for a broken server: the first 13 MB generation's load took tens of seconds on a loaded machine
    240_000,
  );
  const p = proc;
  await pageGeneration(p.url, 1);
  let g = 1;
  // Two publishes fill the budget; the warm-up readings are the healthy envelope.
  await publishGeneration(++g);
  await publishGeneration(++g);
  const warm: number[] = [];
  for (let i = 0; i < WARM; i++) {
    await publishGeneration(++g);
    warm.push(rssOf(p.child.pid!));
  }
  const status = await getJson(`${p.url}/admin/status`, ADMIN_KEY);
  const liveBytes: number = status.retention.live_bytes;
  expect(status.retention.generations.length, 'the budget is full: each publish evicts one').toBe(1);
  expect(liveBytes).toBeGreaterThan(10 * MB);

  const readings: number[] = [];
  for (let i = 0; i < MEASURED; i++) {
    await publishGeneration(++g);
    readings.push(rssOf(p.child.pid!));
  }
  const after = await getJson(`${p.url}/admin/status`, ADMIN_KEY);
  expect(after.retention.generations.length).toBe(1);
  expect(after.datasets[0]!.generation).toBe(g);

  const mb = (b: number): string => (b / MB).toFixed(0);
  const start = Math.max(...warm);
  const bound = start * 1.1 + liveBytes + (caches ? (CACHE_MB.response * workers + CACHE_MB.row + CACHE_MB.page) * MB : 0);
  const slope = slopeOf(readings);
  const story = `RSS in the warm-up ${warm.map(mb).join(', ')} MB, then after each publish ${readings.map(mb).join(', ')} MB: ${mb(slope)} MB per publish (${mb(liveBytes)} MB evicted by each; bound ${mb(bound)} MB)`;
  expect(slope, story).toBeLessThan(liveBytes / 3);
  expect(Math.max(...readings), story).toBeLessThanOrEqual(bound);
}

/** The least-squares slope of `ys` over 0, 1, 2...: bytes per publish. */
function slopeOf(ys: readonly number[]): number {
  const n = ys.length;
  const mx = (n - 1) / 2;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of ys.entries()) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return num / den;
}

describe.runIf(process.env['PITCACHE_MEMORY_TEST'] === '1')('pitcache serve: a generation the budget evicts gives its memory back', () => {
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-generation-memory-'));
    await writeFile(join(dir, 'keys.json'), JSON.stringify(defaultKeysJson()));
  });
  afterEach(async () => {
    await proc?.kill();
    proc = undefined;
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('one serving thread, caches off', async () => run(1, false), 600_000);
  it('two serving threads, caches on', async () => run(2, true), 600_000);
});
