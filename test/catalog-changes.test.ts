/**
 * Contract 13: catalog.json at the source is applied while serving, within one refresh
 * interval (injected timers), without a restart: a dataset added loads once its manifest
 * exists (503 dataset_unavailable until then), one removed answers 404, a changed floor
 * applies from the next request, and an invalid catalog of each kind is refused (logged,
 * counted in /metrics, its reason in /admin/status) while the catalog in force stays.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { ADMIN_KEY, EU_KEY, TEST_KEY, startInProcessHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, tagsOf, type PitRow } from './support/fixtures.js';

const INTERVAL = 60_000;
const clock = new ManualClock(Date.UTC(2026, 10, 20, 12, 0, 0));
const timers = new ManualTimers(clock);

/** One series whose value was restated after both floors tried below (v1 early, v2 on 2026-02-01). */
const SITE_ROWS: PitRow[] = [
  { key: { site: 'north' }, date: '2026-01-05', eff: '2026-01-05', obs: '2026-01-05T06:00:00Z', tag: 'v1' },
  { key: { site: 'north' }, date: '2026-01-05', eff: '2026-01-05', obs: '2026-02-01T06:00:00Z', tag: 'v2' },
];

interface Product {
  id: string;
  name: string;
  floor: string | null;
  filters: Array<{ param: string; allowed: string[] | null }>;
  datasets: Array<{ name: string; description: string }>;
}
const acme = (floor: string | null, datasets = ['sites']): Product => ({
  id: 'acme',
  name: 'Acme Signals',
  floor,
  filters: [{ param: 'site', allowed: null }],
  datasets: datasets.map((name) => ({ name, description: `acme ${name}` })),
});
const solo: Product = { id: 'solo', name: 'Solo', floor: null, filters: [], datasets: [{ name: 'one', description: 'one series' }] };
const doc = (products: Product[]): string => JSON.stringify({ format: 'pitcache-catalog/1', products });

let h: Harness;
const logs: Array<Record<string, unknown>> = [];

async function writeCatalog(text: string): Promise<void> {
  await writeFile(join(h.dir, 'catalog.json'), text);
}

/** One refresh interval passes: the loader's round (catalog first, then the datasets due) runs to its end. */
async function oneInterval(): Promise<void> {
  const before = (await status()).catalog.last_check;
  timers.advance(INTERVAL);
  for (let i = 0; i < 400; i++) {
    const s = await status();
    if (s.catalog.last_check !== before && s.datasets.every((d: { state: string }) => d.state !== 'pending')) {
      // the round may still be loading: wait until no timer is missing (the loader re-arms at its end)
      await timers.armed('the next refresh');
      return;
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the refresh round did not run');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function status(): Promise<any> {
  return (await h.get('/admin/status', ADMIN_KEY)).body;
}

async function metric(name: string): Promise<number> {
  const text = (await h.get('/metrics', ADMIN_KEY)).text;
  const line = text.split('\n').find((l) => l.startsWith(name + ' ') || l.startsWith(name + '{'));
  return line === undefined ? NaN : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('contract 13: the catalog applied while serving', () => {
  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [{ productId: 'acme', dataset: 'sites', spec: pitSnapshot(['site'], SITE_ROWS) }],
      prepare: async (dir) => writeFile(join(dir, 'catalog.json'), doc([acme('2026-01-13'), solo])),
      keys: {
        keys: [
          { id: 'all', key: TEST_KEY, products: ['*'] },
          // names a product no catalog has yet: accepted (contract 13)
          { id: 'eu', key: EU_KEY, products: ['solo', 'later'] },
          { id: 'ops', key: ADMIN_KEY, products: ['*'], admin: true },
        ],
      },
      server: {
        clock,
        timers,
        refreshIntervalMs: INTERVAL,
        log: {
          debug: () => undefined,
          info: () => undefined,
          warn: (event: string, fields?: object) => logs.push({ level: 'warn', event, ...fields }),
          error: (event: string, fields?: object) => logs.push({ level: 'error', event, ...fields }),
        } as never,
      },
    });
  });
  afterAll(() => h?.close());

  it('at start the source catalog replaces the built-in one wholly: its datasets are served, the built-in ones are 404', async () => {
    expect(tagsOf(await h.get('/acme/sites?site=north'))).toEqual(['v2']);
    expectError(await h.get('/gbsi_eu/system_stress'), 404, 'not_found', undefined);
    const one = await h.get('/solo/one');
    expectError(one, 503, 'dataset_unavailable', undefined);
    const cat = await h.get('/catalog');
    expect(cat.body.datasets.map((d: { product_id: string; dataset: string }) => `${d.product_id}/${d.dataset}`)).toEqual(['acme/sites', 'solo/one']);
    expect((await status()).catalog).toMatchObject({ origin: 'source', products: 2, datasets: 2, last_error: null, rejected: 0 });
  });

  it('a key naming a product the catalog lacks is accepted; it sees only what it names', async () => {
    const cat = await h.get('/catalog', EU_KEY);
    expect(cat.body.datasets.map((d: { dataset: string }) => d.dataset)).toEqual(['one']);
    expectError(await h.get('/acme/sites', EU_KEY), 403, 'forbidden', undefined);
  });

  it('a dataset added answers 503 dataset_unavailable until its manifest exists, then is loaded within one interval', async () => {
    await writeCatalog(doc([acme('2026-01-13', ['sites', 'more']), solo]));
    await oneInterval();
    expectError(await h.get('/acme/more?site=north'), 503, 'dataset_unavailable', undefined);
    expect((await h.get('/catalog')).body.datasets.find((d: { dataset: string }) => d.dataset === 'more')).toMatchObject({
      state: 'missing',
      generation: null,
    });
    await writeGeneration(h.source, { productId: 'acme', dataset: 'more' }, buildArrowSnapshot(pitSnapshot(['site'], SITE_ROWS)), 3, '2026-11-20T00:00:00Z');
    await oneInterval();
    const r = await h.get('/acme/more?site=north&as_of=2026-01-20');
    expect(r.status, r.text).toBe(200);
    // Under its product's floor (2026-01-13) like its sibling: v2 came after the floor.
    expect(tagsOf(r)).toEqual(['v1']);
    expect((await h.get('/catalog')).body.datasets.find((d: { dataset: string }) => d.dataset === 'more')).toMatchObject({
      state: 'loaded',
      generation: 3,
      rows: 2,
    });
  });

  it('a changed floor applies from the next request: an as_of before it sees the state held at the new floor', async () => {
    // Floor 2026-01-13: v2 (observed 02-01) is after the floor, so as_of 01-20 sees v1.
    const before = await h.get('/acme/sites?site=north&as_of=2026-01-20');
    expect(tagsOf(before)).toEqual(['v1']);
    expect(before.body.metadata).toMatchObject({ vintage_floor: '2026-01-13', floor_applied: false });
    await writeCatalog(doc([acme('2026-03-02', ['sites', 'more']), solo]));
    await oneInterval();
    const after = await h.get('/acme/sites?site=north&as_of=2026-01-20');
    expect(tagsOf(after)).toEqual(['v2']);
    expect(after.body.metadata).toMatchObject({ vintage_floor: '2026-03-02', floor_applied: true, generation: 1 });
    // No floor at all: every observation counts when it was observed.
    await writeCatalog(doc([acme(null, ['sites', 'more']), solo]));
    await oneInterval();
    const none = await h.get('/acme/sites?site=north&as_of=2026-01-20');
    expect(tagsOf(none)).toEqual(['v1']);
    expect(none.body.metadata).toMatchObject({ vintage_floor: null, floor_applied: false });
    expect((await h.get('/catalog')).body.datasets[0]).toMatchObject({ dataset: 'sites', floor: null });
  });

  it('a changed filter applies from the next request: an allowed list refuses other values', async () => {
    expect((await h.get('/acme/sites?site=south')).status).toBe(200);
    const listed = { ...acme(null, ['sites', 'more']), filters: [{ param: 'site', allowed: ['north'] }] };
    await writeCatalog(doc([listed, solo]));
    await oneInterval();
    expectError(await h.get('/acme/sites?site=south'), 400, 'invalid_parameter', 'site');
    expect(tagsOf(await h.get('/acme/sites?site=north'))).toEqual(['v2']);
  });

  const INVALID: ReadonlyArray<readonly [string, string, RegExp]> = [
    ['not JSON', '{"format": "pitcache-catalog/1", "products": [', /not JSON/],
    ['a bad id', doc([{ ...solo, id: 'Solo-1' }]), /product "Solo-1" \(products\[0\]\): id must match/],
    [
      'a reserved name',
      doc([{ ...solo, datasets: [{ name: 'vintages', description: '' }] }]),
      /product "solo" \(products\[0\]\), dataset "vintages" \(datasets\[0\]\): name "vintages" is a route word/,
    ],
    [
      'a reserved filter parameter',
      doc([{ ...solo, filters: [{ param: 'as_of', allowed: null }] }]),
      /filter "as_of" \(filters\[0\]\): "as_of" is a query parameter/,
    ],
    ['a duplicate', doc([solo, solo]), /product "solo" \(products\[1\]\): id "solo" appears twice/],
  ];
  for (const [kind, text, reason] of INVALID) {
    it(`an invalid catalog (${kind}) is refused: logged, counted, its reason in /admin/status; the catalog in force stays`, async () => {
      const rejected = await metric('pitcache_catalog_rejected_total');
      await writeCatalog(text);
      await oneInterval();
      const s = await status();
      expect(s.catalog.last_error).toMatch(reason);
      expect(s.catalog.origin).toBe('source');
      expect(await metric('pitcache_catalog_rejected_total')).toBe(rejected + 1);
      expect(logs.some((l) => l['event'] === 'catalog refused; the catalog in force stays' && reason.test(String(l['reason'])))).toBe(true);
      // Still served under the catalog in force.
      expect(tagsOf(await h.get('/acme/sites?site=north'))).toEqual(['v2']);
      // Not read again while it is unchanged: no second count.
      await oneInterval();
      expect(await metric('pitcache_catalog_rejected_total')).toBe(rejected + 1);
    });
  }

  it('a dataset or product removed answers 404 from the next interval; a key of every product sees a product added later', async () => {
    await writeCatalog(doc([acme(null, ['more']), { ...solo, id: 'later' }]));
    await oneInterval();
    expect((await status()).catalog.last_error).toBeNull();
    expectError(await h.get('/acme/sites?site=north'), 404, 'not_found', undefined);
    expectError(await h.get('/solo/one'), 404, 'not_found', undefined);
    expect(tagsOf(await h.get('/acme/more?site=north'))).toEqual(['v2']);
    // 'later' was named by the eu key before any catalog had it.
    const eu = await h.get('/catalog', EU_KEY);
    expect(eu.body.datasets.map((d: { product_id: string }) => d.product_id)).toEqual(['later']);
    expect((await h.get('/catalog')).body.datasets.map((d: { product_id: string; dataset: string }) => `${d.product_id}/${d.dataset}`)).toEqual([
      'acme/more',
      'later/one',
    ]);
    const ready = await h.get('/readyz', null);
    expect(ready.body.datasets.map((d: { dataset: string }) => d.dataset)).toEqual(['acme/more', 'later/one']);
  });

  it('catalog.json removed: the built-in catalog applies again', async () => {
    const { rm } = await import('node:fs/promises');
    await rm(join(h.dir, 'catalog.json'));
    await oneInterval();
    expect((await status()).catalog).toMatchObject({ origin: 'builtin', products: 6, datasets: 9 });
    expectError(await h.get('/acme/more'), 404, 'not_found', undefined);
    expectError(await h.get('/gbsi_eu/system_stress'), 503, 'dataset_unavailable', undefined);
  });
});
