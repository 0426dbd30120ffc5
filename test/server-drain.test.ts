import { describe, expect, it } from 'vitest';
import { pitSnapshot } from './support/fixtures.js';
import { startInProcessHarness } from './support/harness.js';

describe('RunningServer.drain (what SIGTERM does first)', () => {
  it('turns /readyz to 503 with ready false while data requests are still answered', async () => {
    const h = await startInProcessHarness({
      datasets: [
        {
          productId: 'pemi',
          dataset: 'grid_stress',
          spec: pitSnapshot(['bidding_zone'], [{ date: '2026-03-02', eff: '2026-03-02', obs: '2026-03-02T06:00:00Z', key: { bidding_zone: 'DE' }, tag: 't' }]),
        },
      ],
    });
    try {
      const before = await h.get('/readyz', null);
      expect([before.status, before.body.ready]).toEqual([200, true]);
      h.server.drain();
      const after = await h.get('/readyz', null);
      expect([after.status, after.body.ready]).toEqual([503, false]);
      // The datasets are still loaded and served.
      expect(after.body.datasets.find((d: { dataset: string }) => d.dataset === 'pemi/grid_stress')).toMatchObject({ state: 'loaded', generation: 1 });
      expect((await h.get('/pemi/grid_stress')).status).toBe(200);
      // A dataset with nothing loaded still says why (not "still loading").
      expect((await h.get('/glmi/marginality')).body.error.code).toBe('dataset_unavailable');
    } finally {
      await h.close();
    }
  });
});
