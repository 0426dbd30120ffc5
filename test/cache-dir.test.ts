/**
 * `cacheDir`: verified copies of the last good snapshots on local disk. A first run with S3
 * up fills the cache; a restart while S3 is down (the fault proxy refusing) serves the same
 * rows from it; a cached copy that no longer matches its sha256 is refused, not served.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/time/clock.js';
import { expectError, rowsOf } from './support/fixtures.js';
import {
  ALL_ROWS,
  GRID_ID,
  ManualTimers,
  T0,
  driveStartup,
  expectedValues,
  publish,
  serve,
  startS3World,
  type S3World,
  type Served,
} from './support/s3-harness.js';

let world: S3World;
let cacheDir: string;
let running: Served | null = null;
const cached = (...parts: string[]): string => join(cacheDir, 'pemi', 'grid_stress', ...parts);

beforeAll(async () => {
  world = await startS3World('cache');
  cacheDir = await mkdtemp(join(tmpdir(), 'pitcache-cache-'));
  await publish(world.publisher, 1);
});
afterEach(async () => {
  await running?.close();
  running = null;
  await world.proxy.setMode({ kind: 'pass' });
});
afterAll(async () => {
  await world?.close();
  await rm(cacheDir, { recursive: true, force: true });
});

/** A restart while S3 refuses connections; start-up retries are fired by the test. */
async function restartWithS3Down(): Promise<{ s: Served; sleeps: number[] }> {
  await world.proxy.setMode({ kind: 'refuse' });
  const timers = new ManualTimers(new ManualClock(T0));
  const { value, sleeps } = await driveStartup(
    serve(world.openSource(), { clock: timers.clock, timers, cacheDir, startupTimeoutMs: 5000, backoffBaseMs: 1000 }),
    timers,
  );
  running = value;
  return { s: value, sleeps };
}

describe('cacheDir', () => {
  let firstRows: unknown[];

  it('a run with S3 up fills the cache with the verified snapshot and its manifest', async () => {
    running = await serve(world.openSource(), { cacheDir });
    firstRows = rowsOf(await running.get(ALL_ROWS));
    expect(firstRows.map((r) => (r as { value: number }).value)).toEqual(expectedValues(1));
    const manifest = JSON.parse(await readFile(cached('manifest.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ generation: 1, object: 'snapshots/00000001.arrow', product_id: 'pemi', dataset: 'grid_stress' });
    expect(await readdir(cached('snapshots'))).toEqual(['00000001.arrow']);
  });

  it('a restart while S3 is down serves the same rows from the cache, and says so in /admin/status', async () => {
    const { s } = await restartWithS3Down();
    expect(rowsOf(await s.get(ALL_ROWS))).toEqual(firstRows);
    expect((await s.get('/readyz', null)).status).toBe(200);
    expect(await s.status()).toMatchObject({ state: 'loaded', generation: 1, last_error: 'serving the local cache: the source is unreachable' });
    expect(s.logs.lines.filter((l) => l['msg'] === 'serving a cached generation while the source is unreachable' && l['dataset'] === GRID_ID)).toHaveLength(1);

    // S3 is back with a new generation: it is loaded, and becomes the cached one.
    await world.proxy.setMode({ kind: 'pass' });
    await publish(world.publisher, 2);
    const r = await s.refresh();
    expect(r.body.changed).toEqual([GRID_ID]);
    expect(rowsOf(await s.get(ALL_ROWS)).map((row) => row['value'])).toEqual(expectedValues(2));
    expect(await s.status()).toMatchObject({ generation: 2, last_error: null });
    expect(await readdir(cached('snapshots'))).toEqual(['00000002.arrow']);
  });

  it('once S3 is back with the cached generation unchanged, the cache notice is cleared', async () => {
    const { s } = await restartWithS3Down();
    expect(await s.status()).toMatchObject({ generation: 2, last_error: 'serving the local cache: the source is unreachable' });
    await world.proxy.setMode({ kind: 'pass' });
    const r = await s.refresh();
    expect((r.body.datasets as Array<{ dataset: string; outcome: string }>).find((d) => d.dataset === GRID_ID)!.outcome).toBe('unchanged');
    expect(await s.status()).toMatchObject({ generation: 2, consecutive_failures: 0, last_error: null });
  });

  it('a cached copy whose bytes no longer match its sha256 is refused: the dataset answers 503', async () => {
    const path = cached('snapshots', '00000002.arrow');
    const bytes = await readFile(path);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 20) ^ 0xff, bytes.length - 20);
    await writeFile(path, bytes);
    const { s, sleeps } = await restartWithS3Down();
    expectError(await s.get(ALL_ROWS), 503, 'dataset_unavailable', undefined);
    expect(sleeps.length).toBeGreaterThan(0);
    const refused = s.logs.lines.filter((l) => l['msg'] === 'cached snapshot refused' && l['dataset'] === GRID_ID);
    expect(refused.length).toBeGreaterThan(0);
    for (const line of refused) expect(line['reason']).toMatch(/sha256 mismatch for snapshots\/00000002\.arrow/);
  });

  it('a refused cached copy is logged once per change of reason, not at every start-up retry', async () => {
    const { s, sleeps } = await restartWithS3Down();
    expect(sleeps.length).toBeGreaterThan(1);
    expect(s.logs.lines.filter((l) => l['msg'] === 'cached snapshot refused' && l['dataset'] === GRID_ID)).toHaveLength(1);
  });
});
