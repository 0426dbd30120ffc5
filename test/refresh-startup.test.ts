/**
 * Start-up against S3 (contract 8): an unreachable source is retried with backoff until the
 * start-up timeout, then the server is ready with the datasets it could not load answering
 * 503; a source that comes back before the timeout is loaded. A manifest naming a missing
 * object does not hold start-up: the dataset answers 503 and is retried with backoff until
 * the object appears. Time is a ManualClock; start-up sleeps fire when the test says so.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { expectError, rowsOf } from './support/fixtures.js';
import {
  ALL_ROWS,
  GRID,
  GRID_ID,
  ManualTimers,
  T0,
  driveStartup,
  expectedValues,
  freePort,
  gridSpec,
  nextCheck,
  publish,
  request,
  startS3World,
  serve,
  type S3World,
  type Served,
} from './support/s3-harness.js';

const TIMEOUT = 10_000;
const BASE = 1000;

let world: S3World;
let running: Served | null = null;

beforeAll(async () => {
  world = await startS3World('startup');
  await publish(world.publisher, 1);
});
afterEach(async () => {
  await running?.close();
  running = null;
  await world.proxy.setMode({ kind: 'pass' });
});
afterAll(() => world?.close());

function start(timers: ManualTimers, port = 0, refreshIntervalMs = 0): Promise<Served> {
  return serve(world.openSource(), {
    clock: timers.clock,
    timers,
    port,
    startupTimeoutMs: TIMEOUT,
    backoffBaseMs: BASE,
    backoffMaxMs: 60_000,
    refreshIntervalMs,
  });
}

describe('start-up with the source unreachable', () => {
  it('retries with backoff until the start-up timeout, then is ready with the datasets 503 and /readyz naming them', async () => {
    await world.proxy.setMode({ kind: 'refuse' });
    const timers = new ManualTimers(new ManualClock(T0));
    const port = await freePort();
    const starting = start(timers, port);

    // While it retries: alive, not ready, data not served yet.
    await timers.armed('the first start-up sleep');
    const url = `http://127.0.0.1:${port}`;
    expect((await request(url, '/healthz', null)).status).toBe(200);
    const notReady = await request(url, '/readyz', null);
    expect(notReady.status).toBe(503);
    expect(notReady.body.ready).toBe(false);
    expectError(await request(url, ALL_ROWS), 503, 'not_ready', undefined);

    const { value: s, sleeps } = await driveStartup(starting, timers);
    running = s;
    // 1 s, 2 s, 4 s, then what is left of the 10 s.
    expect(sleeps).toEqual([1000, 2000, 4000, 3000]);
    expect(timers.clock.now()).toBe(T0 + TIMEOUT);

    const ready = await s.get('/readyz', null);
    expect(ready.status).toBe(200);
    const named = (ready.body.datasets as Array<Record<string, unknown>>).find((d) => d['dataset'] === GRID_ID)!;
    // No key, so no reason: the source's error names the endpoint and the bucket.
    expect(named).toEqual({ dataset: GRID_ID, state: 'unreachable', generation: null, rows: null });
    expect(ready.text).not.toMatch(/ECONNREFUSED|manifest\.json|127\.0\.0\.1|snapshots/);
    expect((await s.status()).last_error).toMatch(/pemi\/grid_stress\/manifest\.json.*ECONNREFUSED/);
    const unavailable = await s.get(ALL_ROWS);
    expectError(unavailable, 503, 'dataset_unavailable', undefined);
    // An outage is not a refusal: the caller is told which it is.
    expect(unavailable.body.error.message).toBe('pemi/grid_stress is not loaded: the snapshot source cannot be reached');
    expect(s.logs.lines.filter((l) => l['msg'] === 'source unreachable at start; retrying')).toHaveLength(4);

    // The source comes back: the next refresh loads.
    await world.proxy.setMode({ kind: 'pass' });
    await s.refresh();
    expect(rowsOf(await s.get(ALL_ROWS)).map((r) => r['value'])).toEqual(expectedValues(1));
  });

  it('loads once the source comes back before the start-up timeout', async () => {
    await world.proxy.setMode({ kind: 'refuse' });
    const timers = new ManualTimers(new ManualClock(T0));
    const starting = start(timers);
    await timers.armed('the first start-up sleep');
    timers.fire();
    await timers.armed('the second start-up sleep');
    await world.proxy.setMode({ kind: 'pass' });
    const { value: s, sleeps } = await driveStartup(starting, timers);
    running = s;
    expect(sleeps).toEqual([2000]);
    expect(timers.requested).toEqual([1000, 2000]);
    expect(timers.clock.now()).toBe(T0 + 3000);
    expect(rowsOf(await s.get(ALL_ROWS)).map((r) => r['value'])).toEqual(expectedValues(1));
    expect(await s.status()).toMatchObject({ generation: 1, last_error: null, consecutive_failures: 0 });
  });
});

describe('start-up with a manifest naming a missing object', () => {
  it('does not wait for it: the dataset answers 503, is retried with backoff, and loads once the object appears', async () => {
    const bytes = buildArrowSnapshot(gridSpec(2));
    await writeGeneration(world.publisher, GRID, bytes, 2, '2026-11-01T00:00:00Z');
    const objectPath = 'pemi/grid_stress/snapshots/00000002.arrow';
    await world.remove(objectPath);

    const timers = new ManualTimers(new ManualClock(T0));
    const { value: s, sleeps } = await driveStartup(start(timers, 0, 60_000), timers);
    running = s;
    expect(sleeps, 'start-up slept for a missing object').toEqual([]);
    expect(timers.clock.now()).toBe(T0);

    expectError(await s.get(ALL_ROWS), 503, 'dataset_unavailable', undefined);
    const ready = await s.get('/readyz', null);
    expect(ready.status).toBe(200);
    const named = (ready.body.datasets as Array<Record<string, unknown>>).find((d) => d['dataset'] === GRID_ID)!;
    expect(named).toEqual({ dataset: GRID_ID, state: 'refused', generation: null, rows: null });
    expect(ready.text).not.toMatch(/00000002\.arrow/);
    const first = await s.status();
    expect(first['last_error']).toMatch(/snapshots\/00000002\.arrow/);
    expect(first).toMatchObject({ generation: null, consecutive_failures: 1, next_check: new Date(T0 + BASE).toISOString() });

    const second = await nextCheck(s, timers);
    expect(second).toMatchObject({ generation: null, consecutive_failures: 2, next_check: new Date(T0 + BASE + 2 * BASE).toISOString() });
    expect(s.logs.failures(GRID_ID, second['last_error'] as string), 'logged once').toHaveLength(1);

    await world.put(objectPath, bytes);
    const loaded = await nextCheck(s, timers);
    expect(loaded).toMatchObject({ generation: 2, consecutive_failures: 0, last_error: null });
    expect(rowsOf(await s.get(ALL_ROWS)).map((r) => r['value'])).toEqual(expectedValues(2));
  });
});
