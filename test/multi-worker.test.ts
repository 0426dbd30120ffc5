import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, defaultKeysJson, startHarness, type Harness } from './support/harness.js';

const LIMITED_KEY = 'test-key-limited';
/**
 * Bounds that only turn a broken server into a failure: the tests wait on answers, never on
 * time. Two serving threads load the server's modules (through tsx) as they start, which
 * took over the default 60 s hook timeout on a machine whose cores other suites kept busy
 * (a few seconds alone); 130 requests on fresh connections took 17 s there.
 */
const START_BOUND_MS = 240_000;
const TEST_BOUND_MS = 120_000;

function rows(generation: number): PitRow[] {
  return ['atlantic', 'pacific', 'middle_east'].map((basin, i) => ({
    date: '2026-04-01',
    eff: '2026-04-01',
    obs: '2026-04-01T06:00:00Z',
    key: { basin },
    tag: `g${generation}-${basin}`,
    value: generation * 10 + i,
  }));
}

/** One request on a fresh connection, so that the kernel picks a serving thread each time. */
function once(url: string, key: string): Promise<{ status: number; id: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { 'x-api-key': key, connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, id: String(res.headers['x-request-id']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('two serving threads', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      datasets: [{ productId: 'glmi', dataset: 'marginality', spec: pitSnapshot(['basin'], rows(1)) }],
      keys: defaultKeysJson([{ id: 'limited', key: LIMITED_KEY, products: ['*'], rate_limit: { per_second: 1, burst: 10 } }]),
      server: { workers: 2, build: 'worker' },
    });
  }, START_BOUND_MS);
  afterAll(() => h?.close(), START_BOUND_MS);

  it(
    "a key's rate limit holds across threads: exactly burst requests pass",
    async () => {
      // The shared ManualClock does not move: no token comes back during the test.
      const replies = [];
      for (let i = 0; i < 60; i++) replies.push(await once(`${h.url}/glmi/marginality`, LIMITED_KEY));
      const threads = new Set(replies.map((r) => r.id.slice(0, 12)));
      expect(threads.size).toBe(2);
      expect(replies.filter((r) => r.status === 200)).toHaveLength(10);
      expect(replies.filter((r) => r.status === 429)).toHaveLength(50);
      // Concurrent requests on both threads at once cannot overspend either.
      const concurrent = await Promise.all(Array.from({ length: 40 }, () => once(`${h.url}/glmi/marginality`, LIMITED_KEY)));
      expect(concurrent.filter((r) => r.status === 200)).toHaveLength(0);
    },
    TEST_BOUND_MS,
  );

  it(
    'a refresh swaps the generation on every thread',
    async () => {
      const before = await Promise.all(Array.from({ length: 30 }, () => once(`${h.url}/glmi/marginality`, TEST_KEY)));
      expect(new Set(before.map((r) => r.id.slice(0, 12))).size).toBe(2);
      for (const r of before) expect(JSON.parse(r.body).metadata.generation).toBe(1);

      await writeGeneration(
        h.source,
        { productId: 'glmi', dataset: 'marginality' },
        buildArrowSnapshot(pitSnapshot(['basin'], rows(2))),
        2,
        '2026-11-02T00:00:00Z',
      );
      const res = await fetch(`${h.url}/admin/refresh`, { method: 'POST', headers: { 'x-api-key': ADMIN_KEY } });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { changed: string[] }).changed).toEqual(['glmi/marginality']);

      // The loading thread posts the generation to every thread before it answers the refresh,
      // so each thread has it queued ahead of any later request.
      const after = await Promise.all(Array.from({ length: 30 }, () => once(`${h.url}/glmi/marginality`, TEST_KEY)));
      expect(new Set(after.map((r) => r.id.slice(0, 12))).size).toBe(2);
      for (const r of after) {
        const body = JSON.parse(r.body);
        expect(body.metadata.generation).toBe(2);
        expect(body.data.map((d: { tag: string }) => d.tag).sort()).toEqual(['g2-atlantic', 'g2-middle_east', 'g2-pacific']);
      }
    },
    TEST_BOUND_MS,
  );

  it(
    "admin status from a serving thread reports the loading thread's view",
    async () => {
      const res = await fetch(`${h.url}/admin/status`, { headers: { 'x-api-key': ADMIN_KEY } });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { datasets: Array<{ dataset: string; generation: number; rows: number }> };
      const glmi = body.datasets.find((d) => d.dataset === 'glmi/marginality')!;
      expect(glmi.generation).toBe(2);
      expect(glmi.rows).toBe(3);
    },
    TEST_BOUND_MS,
  );
});
