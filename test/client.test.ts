/** The typed client (src/client) against a real server: pages, errors, Retry-After on 429. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PitcacheClient, PitcacheError } from '../src/client/index.js';
import type { ManualClock } from '../src/time/clock.js';
import { TEST_KEY, defaultKeysJson, startHarness, type Harness } from './support/harness.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const LIMITED_KEY = 'test-key-limited';
const ROWS: PitRow[] = ['2026-04-01', '2026-04-02', '2026-04-03'].flatMap((date) =>
  ['atlantic', 'pacific'].map((basin) => ({ key: { basin }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `${basin}-${date}` })),
);

describe('PitcacheClient', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      datasets: [{ productId: 'glmi', dataset: 'marginality', spec: pitSnapshot(['basin'], ROWS) }],
      keys: defaultKeysJson([{ id: 'limited', key: LIMITED_KEY, products: ['*'], rate_limit: { per_second: 1, burst: 1 } }]),
    });
  });
  afterAll(() => h.close());
  const client = (apiKey = TEST_KEY, extra = {}) => new PitcacheClient({ baseUrl: h.url, apiKey, ...extra });

  it('query returns the envelope', async () => {
    const env = await client().query('glmi', 'marginality', { latest: false });
    expect(env.count).toBe(6);
    expect(env.metadata.total_count).toBe(6);
    expect(env.data.map((r) => [r.date, r['basin']])[0]).toEqual(['2026-04-01', 'atlantic']);
  });

  it('pages follows next_cursor to the end, rows in order, none twice', async () => {
    const pages = [];
    for await (const p of client().pages('glmi', 'marginality', { latest: false, limit: 4 })) pages.push(p);
    expect(pages.map((p) => p.count)).toEqual([4, 2]);
    const all = await client().query('glmi', 'marginality', { latest: false });
    expect(pages.flatMap((p) => p.data)).toEqual(all.data);
  });

  it('throws PitcacheError with status, code, param, recordId', async () => {
    const bad = await client()
      .query('glmi', 'marginality', { limit: 0 })
      .catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(PitcacheError);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'limit' });
    expect((bad as PitcacheError).recordId).toMatch(/^req_[0-9a-z]{16,}$/);
    await expect(client('nope').query('glmi', 'marginality')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    await expect(client().query('glmi', 'nothing')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('429: waits Retry-After seconds (injected sleep) and retries', async () => {
    const clock = h.clock as ManualClock;
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
      clock.advance(ms);
    };
    const c = client(LIMITED_KEY, { sleep });
    await c.query('glmi', 'marginality');
    const env = await c.query('glmi', 'marginality');
    expect(env.count).toBe(2);
    expect(slept).toEqual([1000]);
    const none = client(LIMITED_KEY, { sleep: async () => {}, maxRetries: 0 });
    await expect(none.query('glmi', 'marginality')).rejects.toMatchObject({ status: 429, code: 'rate_limited' });
  });

  it.todo('503 retry with Retry-After: needs a dataset that becomes loaded between attempts (issue 9)');
  it.todo('walkForward iterates /walk_forward pages: endpoint not wired yet (issue 9, contract 10)');
  it.todo('vintages iterates /vintages pages: endpoint not wired yet (issue 9, contract 11)');
  it.todo('arrow() returns an apache-arrow Table of all pages: not written yet (issue 9)');
});
