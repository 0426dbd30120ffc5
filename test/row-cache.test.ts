import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, startInProcessHarness, type Harness, type Reply } from './support/harness.js';

const COUNTRIES = ['DE', 'FR', 'NL'];

/** 3 countries x 120 days, revisions on every 7th key (published 10 days late); values carry the generation. */
function rows(generation: number): PitRow[] {
  const out: PitRow[] = [];
  for (let d = 0; d < 120; d++) {
    const day = new Date(Date.UTC(2026, 0, 1 + d));
    const date = day.toISOString().slice(0, 10);
    const late = new Date(day.getTime() + 10 * 86_400_000).toISOString().slice(0, 10);
    for (const [i, country] of COUNTRIES.entries()) {
      const tag = `g${generation}-${country}-${date}`;
      out.push({ date, eff: date, obs: `${date}T06:00:00Z`, key: { country }, tag, value: generation * 1000 + d + i / 10 });
      if (d % 7 === 0) out.push({ date, eff: date, obs: `${late}T06:00:00Z`, key: { country }, tag: `${tag}-rev`, value: -(generation * 1000 + d) });
    }
  }
  return out;
}

/** A walk-forward loop: [D-30, D] as of D for consecutive D, per country and for all. */
function walkForward(): string[] {
  const paths: string[] = [];
  for (let d = 31; d < 110; d++) {
    const day = (n: number): string => new Date(Date.UTC(2026, 0, 1 + n)).toISOString().slice(0, 10);
    for (const filter of ['country=DE&', 'country=FR,NL&', ''])
      paths.push(`/gbsi_eu/system_stress?${filter}date_from=${day(d - 30)}&date_to=${day(d)}&as_of=${day(d)}`);
  }
  return paths;
}

const norm = (r: Reply): string => {
  expect(r.status, r.text).toBe(200);
  return r.text.replace(/req_[0-9a-z]+/g, 'req_x');
};

describe('row cache (rendered rows reused by overlapping queries)', () => {
  const datasets = [{ productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], rows(1)) }];
  let plain: Harness;
  const cached: Harness[] = [];
  beforeAll(async () => {
    plain = await startInProcessHarness({ datasets, server: { rowCacheBytes: 0 } });
    // one slot (every row evicts the last), a few slots, and room for everything
    for (const rowCacheBytes of [1, 8 * 512, 16 * 1024 * 1024]) cached.push(await startInProcessHarness({ datasets, server: { rowCacheBytes } }));
  });
  afterAll(async () => {
    await plain?.close();
    for (const h of cached) await h.close();
  });

  it('answers a walk-forward loop byte for byte as the server without it', async () => {
    for (const path of walkForward()) {
      const want = norm(await plain.get(path));
      for (const h of cached) expect(norm(await h.get(path)), path).toBe(want);
    }
    expect(plain.cacheStats().rows).toBeNull();
    const [oneSlot, fewSlots, roomy] = cached.map((h) => h.cacheStats().rows!);
    // Consecutive steps share all but a day of rows: with room for them, most rows are copies.
    expect(roomy!.hits).toBeGreaterThan(2 * roomy!.misses);
    expect(roomy!.evictions).toBe(0);
    // One slot: every stored row evicts the one before.
    expect(oneSlot!.slots).toBe(1);
    expect(oneSlot!.evictions).toBeGreaterThan(0);
    expect(fewSlots!.evictions).toBeGreaterThan(0);
  });

  it('never serves a row of a superseded generation', async () => {
    for (const h of cached) for (const path of walkForward().slice(0, 30)) await h.get(path);
    for (const h of [plain, ...cached]) {
      await writeGeneration(h.source, datasets[0]!, buildArrowSnapshot(pitSnapshot(['country'], rows(2))), 2, '2026-11-02T00:00:00Z');
      const refresh = await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
      expect(refresh.body.changed).toEqual(['gbsi_eu/system_stress']);
    }
    for (const path of walkForward().slice(0, 30)) {
      const want = norm(await plain.get(path));
      expect(want).toContain('"tag":"g2-');
      expect(want).not.toContain('"tag":"g1-');
      for (const h of cached) expect(norm(await h.get(path)), path).toBe(want);
    }
  });
});
