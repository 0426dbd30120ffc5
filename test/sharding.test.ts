/**
 * `--datasets`: a replica loads and serves only the selected datasets (two serving threads
 * here); the others answer the contract's 404 naming the served ones, and /readyz waits
 * only for its own.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, startHarness, startInProcessHarness, type Harness, type HarnessDataset } from './support/harness.js';
import { parsePromText } from './support/prom-text.js';

const row = (key: Record<string, string>): PitRow => ({ date: '2026-03-02', eff: '2026-03-02', obs: '2026-03-02T06:00:00Z', key, tag: 't', value: 1 });

const DATASETS: HarnessDataset[] = [
  { productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], [row({ bidding_zone: 'DE' })]) },
  { productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], [row({ country: 'DE' })]) },
  { productId: 'glmi', dataset: 'marginality', spec: pitSnapshot(['basin'], [row({ basin: 'atlantic' })]) },
];

/**
 * wrsi/forecast_stress's manifest cannot be read (a folder where the file should be): a
 * source error that start-up retries until --startup-timeout. Selected, it would hold
 * readiness back; here it is not.
 */
const unreadable = async (dir: string): Promise<void> => {
  await mkdir(join(dir, 'wrsi', 'forecast_stress', 'manifest.json'), { recursive: true });
};

const SELECTION = 'pemi/*,gbsi_*/system_stress';
const SERVED = ['gbsi_us/system_stress', 'gbsi_eu/system_stress', 'pemi/grid_stress'];

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    datasets: DATASETS,
    prepare: unreadable,
    // The harness's clock stands still: an unreachable selected dataset would keep start-up retrying for ever.
    server: { workers: 2, build: 'worker', datasets: SELECTION, startupTimeoutMs: 60_000 },
  });
});
afterAll(() => h?.close());

describe('a replica serving a selection of datasets', () => {
  it('is ready, and /readyz lists only its own datasets', async () => {
    const r = await h.get('/readyz', null);
    expect(r.status).toBe(200);
    expect(r.body.ready).toBe(true);
    expect(r.body.datasets.map((d: { dataset: string }) => d.dataset)).toEqual(SERVED);
    const status = await h.get('/admin/status', ADMIN_KEY);
    expect(status.body.datasets.map((d: { dataset: string }) => d.dataset)).toEqual(SERVED);
  });

  it('serves its own datasets', async () => {
    expect((await h.get('/pemi/grid_stress')).status).toBe(200);
    expect((await h.get('/gbsi_eu/system_stress')).status).toBe(200);
    // Selected but not published: the usual 503.
    expect((await h.get('/gbsi_us/system_stress')).status).toBe(503);
  });

  it('answers 404 naming the served datasets for a dataset it does not serve, whatever the method or endpoint', async () => {
    const message = `glmi/marginality is not served by this replica (--datasets ${SELECTION}); it serves ${SERVED.join(', ')}`;
    for (const [path, method] of [
      ['/glmi/marginality', 'GET'],
      ['/glmi/marginality?basin=atlantic', 'GET'],
      ['/glmi/marginality/walk_forward', 'GET'],
      ['/glmi/marginality/vintages', 'GET'],
      ['/glmi/marginality', 'POST'],
      ['/glmi/marginality', 'HEAD'],
    ] as const) {
      const r = await h.get(path, undefined, { method });
      expect(r.status, `${method} ${path}`).toBe(404);
      if (method !== 'HEAD') expect(r.body.error, `${method} ${path}`).toEqual({ status: 404, code: 'not_found', message });
    }
    const wrsi = await h.get('/wrsi/forecast_stress');
    expect(wrsi.body.error.message).toMatch(/^wrsi\/forecast_stress is not served by this replica/);
  });

  it('keeps the plain 404 for what the catalog does not name, and 401 before any 404', async () => {
    expect((await h.get('/pemi/nope')).body.error.message).toBe('no such product or dataset');
    expect((await h.get('/glmi/marginality/other')).body.error.message).toBe('no such product or dataset');
    expect((await h.get('/nope/marginality')).body.error.message).toBe('no such product or dataset');
    const anonymous = await h.get('/glmi/marginality', null);
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'unauthorized']);
  });

  it('never checks the others at the source: metrics name only its own datasets', async () => {
    const samples = parsePromText((await h.get('/metrics', ADMIN_KEY)).text);
    const named = new Set(samples.map((s) => s.labels['dataset']).filter((d) => d !== undefined && d !== ''));
    expect([...named].sort()).toEqual([...SERVED].sort());
    expect(samples.filter((s) => s.name === 'pitcache_source_errors_total').map((s) => [s.labels['dataset'], s.labels['kind']])).toEqual([
      ['gbsi_us/system_stress', 'manifest_missing'],
    ]);
  });
});

describe('the same source with that dataset selected', () => {
  it('meets the unreadable manifest at start-up (so the replica above really skipped it)', async () => {
    const one = await startInProcessHarness({
      datasets: DATASETS,
      prepare: unreadable,
      server: { datasets: 'wrsi/*', startupTimeoutMs: 0 },
    });
    try {
      const r = await one.get('/readyz', null);
      expect(r.body.datasets).toEqual([{ dataset: 'wrsi/forecast_stress', state: 'unreachable', generation: null, rows: null }]);
      expect((await one.get('/pemi/grid_stress')).body.error.message).toBe(
        'pemi/grid_stress is not served by this replica (--datasets wrsi/*); it serves wrsi/forecast_stress',
      );
    } finally {
      await one.close();
    }
  });
});
