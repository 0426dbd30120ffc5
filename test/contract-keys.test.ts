/**
 * Contract 7 (keys file) and spec 5: sha256 and plaintext keys both authenticate, products
 * entitle, no rate_limit means unlimited.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessHarness, type Harness } from './support/harness.js';
import { expectError, pitSnapshot, rowsOf, type PitRow } from './support/fixtures.js';

const HASHED = 'hashed-secret-key';
const UPPER = 'upper-hex-secret-key';
const PLAIN = 'plain secret, for local use only';
const hex = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

const ROW = (key: Record<string, string>): PitRow => ({ key, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 't' });

describe('contract 7: keys file', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [
        { productId: 'glmi', dataset: 'marginality', spec: pitSnapshot(['basin'], [ROW({ basin: 'atlantic' })]) },
        { productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], [ROW({ bidding_zone: 'FR' })]) },
        { productId: 'gbsi_eu', dataset: 'system_stress', spec: pitSnapshot(['country'], [ROW({ country: 'DE' })]) },
      ],
      keys: {
        keys: [
          { id: 'farm-a', sha256: hex(HASHED), products: ['*'], rate_limit: { per_second: 500, burst: 1000 } },
          { id: 'upper', sha256: hex(UPPER).toUpperCase(), products: ['glmi'] },
          { id: 'eu-desk', key: PLAIN, products: ['gbsi_eu', 'pemi'] },
        ],
      },
    });
  });
  afterAll(() => h.close());

  it('a key listed by its sha256 authenticates with the key itself', async () => {
    for (const path of ['/glmi/marginality', '/pemi/grid_stress', '/gbsi_eu/system_stress']) {
      expect(rowsOf(await h.get(path, HASHED)).length, path).toBe(1);
    }
  });

  it('a sha256 written in upper-case hex is the same key', async () => {
    expect(rowsOf(await h.get('/glmi/marginality', UPPER)).length).toBe(1);
  });

  it('the sha256 itself is not a key', async () => {
    expectError(await h.get('/glmi/marginality', hex(HASHED)), 401, 'unauthorized', undefined);
  });

  it('a plaintext key authenticates', async () => {
    expect(rowsOf(await h.get('/pemi/grid_stress', PLAIN)).length).toBe(1);
    expect(rowsOf(await h.get('/gbsi_eu/system_stress', PLAIN)).length).toBe(1);
  });

  it('products entitle: another product is a 403', async () => {
    expectError(await h.get('/glmi/marginality', PLAIN), 403, 'forbidden', undefined);
    expectError(await h.get('/pemi/grid_stress', UPPER), 403, 'forbidden', undefined);
  });

  it('keys of the default harness are not known to this keys file', async () => {
    expectError(await h.get('/glmi/marginality', 'test-key-all-products'), 401, 'unauthorized', undefined);
  });

  it('no rate_limit means unlimited: no 429 however many requests at one instant', async () => {
    for (let i = 0; i < 30; i++) expect((await h.get('/pemi/grid_stress', PLAIN)).status).toBe(200);
  });

  it('a rate_limit is reported on successful answers', async () => {
    const r = await h.get('/glmi/marginality', HASHED);
    expect(r.status).toBe(200);
    expect(r.headers.get('ratelimit-limit')).toBe('1000');
  });
});
