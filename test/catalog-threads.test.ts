/**
 * Contract 13 with several serving threads: a new catalog is applied on every thread (each
 * in one message turn), so after a refresh every thread answers under it: a removed
 * dataset is 404, an added one is served, a changed floor gives the re-floored answer.
 */
import { request } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const ROWS: PitRow[] = [
  { key: { site: 'north' }, date: '2026-01-05', eff: '2026-01-05', obs: '2026-01-05T06:00:00Z', tag: 'v1' },
  { key: { site: 'north' }, date: '2026-01-05', eff: '2026-01-05', obs: '2026-02-01T06:00:00Z', tag: 'v2' },
];
const doc = (floor: string | null, datasets: string[]) =>
  JSON.stringify({
    format: 'pitcache-catalog/1',
    products: [{ id: 'acme', name: 'Acme', floor, filters: [{ param: 'site', allowed: null }], datasets: datasets.map((name) => ({ name, description: '' })) }],
  });

/** One request on a fresh connection, so that the kernel picks a serving thread each time. */
function once(url: string): Promise<{ status: number; thread: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers: { 'x-api-key': TEST_KEY, connection: 'close' } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, thread: String(res.headers['x-request-id']).slice(0, 12), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const tag = (body: string): unknown => (JSON.parse(body) as { data: Array<{ tag: string }> }).data.map((r) => r.tag)[0];

describe('contract 13: two serving threads switch catalog together', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      datasets: [
        { productId: 'acme', dataset: 'a', spec: pitSnapshot(['site'], ROWS) },
        { productId: 'acme', dataset: 'b', spec: pitSnapshot(['site'], ROWS) },
      ],
      prepare: (dir) => writeFile(join(dir, 'catalog.json'), doc('2026-01-13', ['a', 'b'])),
      server: { workers: 2, build: 'worker' },
    });
  }, 60_000);
  afterAll(() => h?.close());

  it('after one refresh every thread answers under the new catalog', async () => {
    const asOf = `${h.url}/acme/a?site=north&as_of=2026-01-20`;
    const before = await Promise.all(Array.from({ length: 30 }, () => once(asOf)));
    expect(new Set(before.map((r) => r.thread)).size).toBe(2);
    expect(new Set(before.map((r) => tag(r.body)))).toEqual(new Set(['v1']));

    await writeGeneration(h.source, { productId: 'acme', dataset: 'c' }, buildArrowSnapshot(pitSnapshot(['site'], ROWS)), 1, '2026-11-20T00:00:00Z');
    await writeFile(join(h.dir, 'catalog.json'), doc('2026-03-02', ['a', 'c']));
    await h.server.loader.refreshNow();

    const after = await Promise.all(Array.from({ length: 30 }, () => once(asOf)));
    const removed = await Promise.all(Array.from({ length: 30 }, () => once(`${h.url}/acme/b?site=north`)));
    const added = await Promise.all(Array.from({ length: 30 }, () => once(`${h.url}/acme/c?site=north`)));
    for (const batch of [after, removed, added]) expect(new Set(batch.map((r) => r.thread)).size).toBe(2);
    expect(new Set(after.map((r) => `${r.status} ${String(tag(r.body))}`))).toEqual(new Set(['200 v2']));
    expect(new Set(removed.map((r) => r.status))).toEqual(new Set([404]));
    expect(new Set(added.map((r) => `${r.status} ${String(tag(r.body))}`))).toEqual(new Set(['200 v2']));
  }, 60_000);
});
