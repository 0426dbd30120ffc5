/**
 * The cache sizes given to `pitcache serve` reach its serving threads: serve-config parses
 * them (config-serve.test.ts) and the server uses what it is handed (row-cache.test.ts),
 * and this covers the step between, through the real CLI and /metrics. Each run asks the
 * same walk-forward loop (one series, a 30-day window stepping a day) and a repeated query;
 * a cache that is on counts events, one turned off counts none.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, defaultKeysJson } from './support/harness.js';
import { parsePromText, total } from './support/prom-text.js';
import { startServeProcess, writeGridStress, type ServeProcess } from './support/serve-process.js';

const DAYS = 60;
const day = (d: number): string => new Date(Date.UTC(2026, 0, 1 + d)).toISOString().slice(0, 10);

let dir: string;
let proc: ServeProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-cache-options-'));
  const rows = ['DE', 'FR'].flatMap((zone) =>
    Array.from({ length: DAYS }, (_, d) => ({
      date: day(d),
      eff: day(d),
      obs: `${day(d)}T06:00:00Z`,
      key: { bidding_zone: zone },
      tag: `${zone}-${d}`,
      value: d / 7,
    })),
  );
  await writeGridStress(dir, rows);
  await writeFile(join(dir, 'keys.json'), JSON.stringify(defaultKeysJson()));
});
afterEach(async () => {
  await proc?.kill();
  proc = undefined;
});
afterAll(() => rm(dir, { recursive: true, force: true }));

async function ok(url: string): Promise<void> {
  const res = await fetch(url, { headers: { 'x-api-key': TEST_KEY } });
  expect(res.status, url).toBe(200);
  await res.arrayBuffer();
}

/** Every cache's hits and misses after the loop and the repeated query, as /metrics counts them. */
async function eventsAfterLoop(options: string[], env: NodeJS.ProcessEnv = {}): Promise<Record<'response' | 'row' | 'page', { hit: number; miss: number }>> {
  proc = await startServeProcess(
    [
      ...options,
      '--source',
      join(dir, 'src'),
      '--keys',
      join(dir, 'keys.json'),
      '--workers',
      '1',
      '--refresh-interval',
      '0',
      '--drain-seconds',
      '0',
      '--metrics-port',
      '0',
    ],
    env,
  );
  const p = proc;
  for (let d = 30; d < 40; d++) await ok(`${p.url}/pemi/grid_stress?bidding_zone=DE&date_from=${day(d - 30)}&date_to=${day(d)}&as_of=${day(d)}`);
  for (let k = 0; k < 4; k++) await ok(`${p.url}/pemi/grid_stress?bidding_zone=FR&date_from=${day(0)}&date_to=${day(20)}`);
  const text = await (await fetch(`http://127.0.0.1:${p.metricsPort}/metrics`)).text();
  const samples = parsePromText(text);
  const count = (cache: string, event: string): number => total(samples, 'pitcache_cache_events_total', { cache, event });
  const of = (cache: string) => ({ hit: count(cache, 'hit'), miss: count(cache, 'miss') });
  return { response: of('response'), row: of('row'), page: of('page') };
}

describe('pitcache serve: the cache options reach the serving threads', () => {
  it('by default every cache is on: the loop copies rows and pages, the repeated query is answered from the response cache', async () => {
    const e = await eventsAfterLoop([]);
    expect(e.row.hit).toBeGreaterThan(0);
    expect(e.page.hit).toBeGreaterThan(0);
    expect(e.page.miss).toBeGreaterThan(0);
    expect(e.response.hit).toBeGreaterThan(0);
  }, 60_000);

  it('--page-cache-mb 0 turns the page arena off and leaves the row arena on', async () => {
    const e = await eventsAfterLoop(['--page-cache-mb', '0']);
    expect(e.page).toEqual({ hit: 0, miss: 0 });
    expect(e.row.hit).toBeGreaterThan(0);
  }, 60_000);

  it('--row-cache-mb 0 turns the row arena off, and the page arena with it', async () => {
    const e = await eventsAfterLoop(['--row-cache-mb', '0']);
    expect(e.row).toEqual({ hit: 0, miss: 0 });
    expect(e.page).toEqual({ hit: 0, miss: 0 });
    expect(e.response.hit).toBeGreaterThan(0);
  }, 60_000);

  it('PITCACHE_PAGE_CACHE_MB and PITCACHE_RESPONSE_CACHE_MB as the environment gives them', async () => {
    const e = await eventsAfterLoop([], { PITCACHE_PAGE_CACHE_MB: '0', PITCACHE_RESPONSE_CACHE_MB: '0' });
    expect(e.page).toEqual({ hit: 0, miss: 0 });
    expect(e.response).toEqual({ hit: 0, miss: 0 });
    expect(e.row.hit).toBeGreaterThan(0);
  }, 60_000);
});
