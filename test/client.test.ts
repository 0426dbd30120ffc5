/** The typed client (src/client) against a real server: pages, errors, Retry-After on 429. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PitcacheClient, PitcacheError } from '../src/client/index.js';
import type { ManualClock } from '../src/time/clock.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ADMIN_KEY, TEST_KEY, defaultKeysJson, startHarness, type Harness } from './support/harness.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const LIMITED_KEY = 'test-key-limited';
const ROWS: PitRow[] = ['2026-04-01', '2026-04-02', '2026-04-03'].flatMap((date) =>
  ['atlantic', 'pacific'].map((basin) => ({ key: { basin }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `${basin}-${date}` })),
);

const PEMI_ROWS: PitRow[] = [{ key: { bidding_zone: 'DE' }, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 'DE' }];

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

  it('catalog() lists what the key may read (contract 13), typed', async () => {
    const cat = await client().catalog();
    const glmi = cat.datasets.find((d) => d.product_id === 'glmi')!;
    expect(glmi).toMatchObject({ dataset: 'marginality', state: 'loaded', generation: 1, rows: 6, series: 2, series_key: ['basin'], date_max: '2026-04-03' });
    expect(glmi.columns?.find((c) => c.name === 'value')).toEqual({ name: 'value', type: 'Float64', nullable: true });
    await expect(client('nope').catalog()).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
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

  it('503: waits Retry-After seconds and retries until the dataset is loaded', async () => {
    const slept: number[] = [];
    const sleep = async (ms: number) => {
      slept.push(ms);
      // Between the attempts ops publish the dataset and the server picks it up.
      if (slept.length === 1) {
        await writeGeneration(
          h.source,
          { productId: 'pemi', dataset: 'grid_stress' },
          buildArrowSnapshot(pitSnapshot(['bidding_zone'], PEMI_ROWS), 'file'),
          1,
          '2026-11-01T00:00:00Z',
        );
        expect((await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' })).status).toBe(200);
      }
    };
    await expect(client(TEST_KEY, { sleep: async () => {}, maxRetries: 0 }).query('pemi', 'grid_stress')).rejects.toMatchObject({
      status: 503,
      code: 'dataset_unavailable',
    });
    const env = await client(TEST_KEY, { sleep }).query('pemi', 'grid_stress');
    expect(env.data.map((r) => r['tag'])).toEqual(['DE']);
    expect(slept).toEqual([30_000]);
  });

  it('walkForward iterates the pages of /walk_forward (contract 10)', async () => {
    const pages = [];
    for await (const p of client().walkForward('glmi', 'marginality', { decision_from: '2026-04-01', decision_to: '2026-04-03', window: 1, limit: 3 }))
      pages.push(p);
    // 04-01: 2 rows, 04-02: 4, 04-03: 4 (dates in [D-1, D])
    expect(pages.map((p) => p.count)).toEqual([3, 3, 3, 1]);
    const rows = pages.flatMap((p) => p.data);
    expect(rows.map((r) => `${r.decision_date} ${String(r['tag'])}`).slice(0, 4)).toEqual([
      '2026-04-01 atlantic-2026-04-01',
      '2026-04-01 pacific-2026-04-01',
      '2026-04-02 atlantic-2026-04-01',
      '2026-04-02 pacific-2026-04-01',
    ]);
  });

  it('vintages iterates the pages of /vintages (contract 11)', async () => {
    const pages = [];
    for await (const p of client().vintages('glmi', 'marginality', { basin: 'pacific', limit: 2 })) pages.push(p);
    expect(pages.map((p) => p.count)).toEqual([2, 1]);
    expect(pages.flatMap((p) => p.data).map((r) => [r['tag'], r.visible_from, r.visible_to])).toEqual([
      ['pacific-2026-04-01', '2026-04-01T06:00:00.000000Z', null],
      ['pacific-2026-04-02', '2026-04-02T06:00:00.000000Z', null],
      ['pacific-2026-04-03', '2026-04-03T06:00:00.000000Z', null],
    ]);
  });

  it('arrow() gathers every page into one apache-arrow Table with the stored types', async () => {
    const t = await client().arrow('glmi', 'marginality', { latest: false, limit: 4 });
    expect(t.numRows).toBe(6);
    expect(String(t.schema.fields.find((f) => f.name === 'date')!.type)).toBe('Date32<DAY>');
    expect(String(t.schema.fields.find((f) => f.name === 'str_observed_at')!.type)).toBe('Timestamp<MICROSECOND, UTC>');
    expect(t.getChild('tag')!.toArray()).toEqual(ROWS.map((r) => r.tag));
    const wf = await client().arrow('glmi', 'marginality', { decision_from: '2026-04-01', decision_to: '2026-04-03', window: 1, limit: 3 }, 'walk_forward');
    expect(wf.numRows).toBe(10);
    expect(wf.schema.fields[0]!.name).toBe('decision_date');
    const none = await client().arrow('glmi', 'marginality', { date_from: '2030-01-01' });
    expect(none.numRows).toBe(0);
    expect(none.schema.fields.map((f) => f.name)).toContain('tag');
  });
});
