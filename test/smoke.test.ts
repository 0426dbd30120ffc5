import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startHarness, type Harness } from './support/harness.js';

const D = (s: string) => Math.round(Date.parse(s + 'T00:00:00Z') / 86_400_000);
const US = (s: string) => Date.parse(s) * 1000;

describe('smoke: one dataset end to end, every endpoint over the socket (the contract suite runs in process)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      datasets: [
        {
          productId: 'glmi',
          dataset: 'marginality',
          spec: {
            seriesKey: ['basin'],
            columns: [
              { name: 'date', type: 'date32', values: [D('2026-04-01'), D('2026-04-01'), D('2026-04-01'), D('2026-04-02')] },
              {
                name: 'str_effective_at',
                type: 'timestamp',
                unit: 'us',
                values: [US('2026-04-02T00:00:00Z'), US('2026-04-02T00:00:00Z'), US('2026-04-02T00:00:00Z'), US('2026-04-03T00:00:00Z')],
              },
              {
                name: 'str_observed_at',
                type: 'timestamp',
                unit: 'us',
                values: [US('2026-04-02T06:00:00Z'), US('2026-04-05T06:00:00Z'), US('2026-04-02T06:00:00Z'), US('2026-04-03T06:00:00Z')],
              },
              {
                name: 'str_ingested_at',
                type: 'timestamp',
                unit: 'us',
                values: [US('2026-04-02T07:00:00Z'), US('2026-04-05T07:00:00Z'), US('2026-04-02T07:00:00Z'), US('2026-04-03T07:00:00Z')],
              },
              { name: 'model_version', type: 'utf8', values: ['1.0', '1.0', '1.0', '1.0'] },
              { name: 'basin', type: 'dict-utf8', values: ['atlantic', 'atlantic', 'pacific', 'atlantic'] },
              { name: 'value', type: 'float64', values: [1.5, 2.5, 7, 3.5] },
            ],
          },
        },
      ],
    });
  });
  afterAll(() => h.close());

  it('serves the latest row per series and rebuilds an earlier state with as_of', async () => {
    const now = await h.get('/glmi/marginality');
    expect(now.status).toBe(200);
    expect(now.body.data.map((r: { basin: string; date: string; value: number }) => [r.date, r.basin, r.value])).toEqual([
      ['2026-04-01', 'pacific', 7],
      ['2026-04-02', 'atlantic', 3.5],
    ]);
    const then = await h.get('/glmi/marginality?as_of=2026-04-02&basin=atlantic');
    expect(then.status).toBe(200);
    expect(then.body.data.map((r: { value: number }) => r.value)).toEqual([1.5]);
    const range = await h.get('/glmi/marginality?date_from=2026-04-01&basin=atlantic');
    expect(range.body.data.map((r: { value: number }) => r.value)).toEqual([2.5, 3.5]);
  });

  it("answers health, readiness and the admin endpoints over uWS, and the route table's 404 and 405", async () => {
    expect(h.transport).toBe('uws');
    const health = await h.get('/healthz', null);
    expect([health.status, health.body]).toEqual([200, { status: 'ok' }]);
    const ready = await h.get('/readyz', null);
    expect(ready.status).toBe(200);
    expect(ready.body.ready).toBe(true);
    const status = await h.get('/admin/status', ADMIN_KEY);
    expect(status.status).toBe(200);
    expect(status.body.datasets.find((d: { dataset: string }) => d.dataset === 'glmi/marginality').generation).toBe(1);
    const refresh = await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
    expect([refresh.status, refresh.body.changed]).toEqual([200, []]);
    // walk_forward and vintages over the socket (contract 10, 11; their suites run in process)
    const wf = await h.get('/glmi/marginality/walk_forward?decision_from=2026-04-03&decision_to=2026-04-06&step=3&window=5');
    expect(wf.body.data.map((r: Record<string, unknown>) => [r.decision_date, r.date, r.basin, r.value])).toEqual([
      ['2026-04-03', '2026-04-01', 'atlantic', 1.5],
      ['2026-04-03', '2026-04-01', 'pacific', 7],
      ['2026-04-03', '2026-04-02', 'atlantic', 3.5],
      // by 04-06 the atlantic 04-01 revision observed on 04-05 is known
      ['2026-04-06', '2026-04-01', 'atlantic', 2.5],
      ['2026-04-06', '2026-04-01', 'pacific', 7],
      ['2026-04-06', '2026-04-02', 'atlantic', 3.5],
    ]);
    const v = await h.get('/glmi/marginality/vintages?basin=atlantic&date_to=2026-04-01');
    expect(v.body.data.map((r: Record<string, unknown>) => [r.value, r.visible_from, r.visible_to])).toEqual([
      [1.5, '2026-04-02T06:00:00.000000Z', '2026-04-05T06:00:00.000000Z'],
      [2.5, '2026-04-05T06:00:00.000000Z', null],
    ]);
    for (const path of ['/glmi/marginality/other', '/glmi/nope']) {
      const r = await h.get(path);
      expect([r.status, r.body.error.code], path).toEqual([404, 'not_found']);
    }
    const post = await h.get('/glmi/marginality', undefined, { method: 'POST' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const healthPost = await h.get('/healthz', null, { method: 'POST' });
    expect([healthPost.status, healthPost.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    const refreshGet = await h.get('/admin/refresh', ADMIN_KEY);
    expect([refreshGet.status, refreshGet.headers.get('allow')]).toEqual([405, 'POST']);
  });
});
