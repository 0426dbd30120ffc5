/**
 * Spec 8 and contract 1: vintage floors. Visible under T: effective <= T and
 * observed <= max(T, F), F = end of the product's floor day. The same rows are published to
 * gbsi_eu (floor 2026-01-13) and glmi (floor 2026-03-02) so that only the floor differs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { pitSnapshot, rowsOf, type PitRow } from './support/fixtures.js';

/** s1 has a version on each side of both floor ends; s2 is observed early but effective late. */
function rows(column: string, s1: string, s2: string): PitRow[] {
  const k1 = { [column]: s1 };
  const k2 = { [column]: s2 };
  return [
    { key: k1, date: '2026-01-05', eff: '2026-01-06', obs: '2026-01-06T06:00:00Z', tag: 'v1' },
    { key: k1, date: '2026-01-05', eff: '2026-01-06', obs: '2026-01-13T23:59:59.999999Z', tag: 'v2' },
    { key: k1, date: '2026-01-05', eff: '2026-01-06', obs: '2026-01-14T00:00:00Z', tag: 'v3' },
    { key: k1, date: '2026-01-05', eff: '2026-01-06', obs: '2026-03-02T12:00:00Z', tag: 'v4' },
    { key: k1, date: '2026-01-05', eff: '2026-01-06', obs: '2026-03-03T00:00:00Z', tag: 'v5' },
    { key: k2, date: '2026-01-08', eff: '2026-01-10', obs: '2026-01-09T00:00:00Z', tag: 'late-eff' },
  ];
}

describe('spec 8 / contract 1: vintage floors', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [
        { productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], rows('country', 'DE', 'FR')) },
        { productId: 'glmi', dataset: 'marginality', spec: pitSnapshot(['basin'], rows('basin', 'atlantic', 'pacific')) },
        {
          productId: 'wrsi',
          dataset: 'forecast_stress',
          spec: pitSnapshot(
            ['geography', 'region_type'],
            rows('geography', 'US', 'ERCOT').map((r) => ({ ...r, key: { ...r.key, region_type: 'iso' } })),
          ),
        },
      ],
    });
  });
  afterAll(() => h.close());

  /** The tags returned, in order, for one dataset and as_of (latest=true: one per series). */
  async function tags(path: string, asOf: string): Promise<string[]> {
    const r = await h.get(`${path}?as_of=${encodeURIComponent(asOf)}`);
    return rowsOf(r).map((row) => String(row['tag']));
  }

  it('spec 8 / 4.3.4: an as_of before the floor is not an error', async () => {
    for (const path of ['/gbsi_eu/system_stress', '/glmi/marginality', '/wrsi/forecast_stress']) {
      const r = await h.get(`${path}?as_of=2020-01-01`);
      expect(r.status, r.text).toBe(200);
      expect(r.body.data).toEqual([]);
    }
  });

  it('contract 1: an as_of before the floor sees the state held at the end of the floor day (gbsi_eu: 2026-01-13)', async () => {
    // T = end of 01-09 < F = end of 01-13: v2 (observed at the last µs of 01-13) is the state at the floor.
    expect(await tags('/gbsi_eu/system_stress', '2026-01-09')).toEqual(['v2']);
    expect(await tags('/gbsi_eu/system_stress', '2026-01-13')).toEqual(['v2', 'late-eff']);
  });

  it('contract 1: the floor of glmi (2026-03-02) is later, so the same as_of sees a later version', async () => {
    expect(await tags('/glmi/marginality', '2026-01-09')).toEqual(['v4']);
    expect(await tags('/glmi/marginality', '2026-01-14')).toEqual(['v4', 'late-eff']);
  });

  it('contract 1: wrsi shares the 2026-01-13 floor of gbsi_eu', async () => {
    expect(await tags('/wrsi/forecast_stress', '2026-01-09')).toEqual(['v2']);
  });

  it('contract 1: before the floor, a row whose effective time is after T is still never seen', async () => {
    // late-eff was observed on 01-09 (before both floors) but is effective only on 01-10.
    expect(await tags('/gbsi_eu/system_stress', '2026-01-09T23:59:59Z')).toEqual(['v2']);
    expect(await tags('/glmi/marginality', '2026-01-09T23:59:59Z')).toEqual(['v4']);
    expect(await tags('/gbsi_eu/system_stress', '2026-01-10T00:00:00Z')).toEqual(['v2', 'late-eff']);
    expect(await tags('/glmi/marginality', '2026-01-10T00:00:00Z')).toEqual(['v4', 'late-eff']);
    // Effective after T hides a row before the floor for every version of it, too.
    expect(await tags('/gbsi_eu/system_stress', '2026-01-05')).toEqual([]);
  });

  it('contract 1: after the floor, observed <= T applies as usual', async () => {
    expect(await tags('/gbsi_eu/system_stress', '2026-01-14')).toEqual(['v3', 'late-eff']);
    expect(await tags('/gbsi_eu/system_stress', '2026-03-02')).toEqual(['v4', 'late-eff']);
    expect(await tags('/glmi/marginality', '2026-03-02T23:59:59.999999Z')).toEqual(['v4', 'late-eff']);
    expect(await tags('/glmi/marginality', '2026-03-03')).toEqual(['v5', 'late-eff']);
    expect(await tags('/gbsi_eu/system_stress', '2026-03-03')).toEqual(['v5', 'late-eff']);
  });
});
