import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './support/harness.js';

const D = (s: string) => Math.round(Date.parse(s + 'T00:00:00Z') / 86_400_000);
const US = (s: string) => Date.parse(s) * 1000;

describe('smoke: one dataset end to end', () => {
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
              { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: [US('2026-04-02T00:00:00Z'), US('2026-04-02T00:00:00Z'), US('2026-04-02T00:00:00Z'), US('2026-04-03T00:00:00Z')] },
              { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: [US('2026-04-02T06:00:00Z'), US('2026-04-05T06:00:00Z'), US('2026-04-02T06:00:00Z'), US('2026-04-03T06:00:00Z')] },
              { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: [US('2026-04-02T07:00:00Z'), US('2026-04-05T07:00:00Z'), US('2026-04-02T07:00:00Z'), US('2026-04-03T07:00:00Z')] },
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
});
