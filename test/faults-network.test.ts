/**
 * Network faults between the server and S3 (s3rver behind the real TCP fault proxy): the
 * source refuses connections, stalls, or answers 500. Each one keeps the last good
 * generation served (requests answer throughout, also while a refresh hangs), shows in
 * /admin/status, is logged once however often it repeats, and once repaired the next
 * refresh loads the generation that waited behind it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import type { FaultMode } from './support/tcp-fault-proxy.js';
import {
  GRID_ID,
  T0,
  expectedValues,
  gridSpec,
  publish,
  serve,
  startS3World,
  type S3World,
  type Served,
  gridValues,
  refreshReport,
  type RefreshReport,
} from './support/s3-harness.js';

/**
 * The source's stall watchdog runs on timers only the test fires, once the proxy holds the
 * connection silent: a loaded machine that slows s3rver down can never pass for a stall (a
 * real 400 ms watchdog did, and made this file flaky under `npm test`), and no test waits
 * for the stall time to pass.
 */
const STALL_MS = 30_000;
const watchdog = new ManualTimers(new ManualClock(0));
/**
 * 800 rows: the object (~50 kB) is far larger than all the manifests and 404s a refresh
 * reads over one connection (~5 kB), so a cut after CUT_AFTER bytes always hits the object.
 */
const DATES = 200;
const CUT_AFTER = 16_000;

let world: S3World;
let s: Served;
let served = 1;
/** connections the proxy held silent since its stats were reset */
let held = 0;
const clock = new ManualClock(T0);

beforeAll(async () => {
  world = await startS3World('net');
  await publish(world.publisher, 1, gridSpec(1, DATES));
  s = await serve(world.openSource({ stallTimeoutMs: STALL_MS, timers: watchdog, clock: watchdog.clock }), { clock });
});
afterAll(async () => {
  await s?.close();
  await world?.close();
});

const values = (): Promise<unknown[]> => gridValues(s);
const refreshGrid = (): Promise<RefreshReport> => refreshReport(s);

/**
 * Lets the stall time pass for each read the proxy holds silent until `refreshing` settles
 * (a refresh reads more than one object: every connection of it stalls). Each watchdog is
 * the only timer pending when its connection goes silent, and it fires at exactly STALL_MS,
 * not a millisecond before. Returns how many reads stalled.
 */
async function stallsPass(refreshing: Promise<RefreshReport>): Promise<number> {
  let settled = false;
  void refreshing.finally(() => (settled = true));
  for (let n = 0; ; n++) {
    await Promise.race([world.proxy.whenHeld(++held), refreshing]);
    if (settled) {
      held--;
      return n;
    }
    expect(watchdog.size, 'one read in flight, watched').toBe(1);
    watchdog.advance(STALL_MS - 1);
    expect(watchdog.size, 'not aborted before the stall time').toBe(1);
    watchdog.advance(1);
    expect(watchdog.size).toBe(0);
  }
}

/**
 * Generation served+1 waits at the source while `mode` is on: two refreshes fail with the
 * same reason (one log line), data is answered from the last good generation throughout,
 * and the first refresh after the proxy passes again loads the new generation.
 */
async function survives(mode: FaultMode, reason: RegExp): Promise<void> {
  // A clean start whatever an earlier test left behind: the failure count and the logged
  // reason start from nothing.
  expect((await refreshGrid()).outcome).not.toBe('unreachable');
  expect(await s.status()).toMatchObject({ consecutive_failures: 0, last_error: null });
  world.proxy.resetStats();
  held = 0;
  const logsFrom = s.logs.lines.length;
  served = (await s.status()).generation as number;
  const next = served + 1;
  await publish(world.publisher, next, gridSpec(next, DATES));
  await world.proxy.setMode(mode);
  try {
    for (const attempt of [1, 2]) {
      clock.advance(1000);
      const refreshing = refreshGrid();
      // Answered while the refresh is under way (a stalled one waits for its watchdog).
      expect(await values()).toEqual(expectedValues(served, DATES));
      if (mode.kind === 'stall') expect(await stallsPass(refreshing)).toBeGreaterThan(0);
      const report = await refreshing;
      expect(report).toMatchObject({ outcome: 'unreachable', generation_before: served, generation_after: served });
      expect(report.error).toMatch(reason);
      expect(report.error).not.toMatch(/S3RVER|Signature|Credential/);
      expect(await s.status()).toMatchObject({
        state: 'loaded',
        generation: served,
        last_error: report.error,
        consecutive_failures: attempt,
        last_check: new Date(clock.now()).toISOString(),
      });
      expect(s.logs.failures(GRID_ID, report.error!, logsFrom), 'logged once per change of reason').toHaveLength(1);
      expect(await values()).toEqual(expectedValues(served, DATES));
    }
    expect((await s.get('/readyz', null)).status).toBe(200);
  } finally {
    await world.proxy.setMode({ kind: 'pass' });
  }
  expect(await refreshGrid()).toMatchObject({ outcome: 'loaded', generation_before: served, generation_after: next, error: null });
  expect(await s.status()).toMatchObject({ generation: next, last_error: null, consecutive_failures: 0 });
  expect(await values()).toEqual(expectedValues(next, DATES));
  served = next;
}

describe('network faults keep the last good generation', () => {
  it('S3 unreachable (connection refused)', async () => {
    await survives(
      { kind: 'refuse' },
      /^reading pemi\/grid_stress\/manifest\.json: S3 GetObject s3:\/\/snapshots\/net\/pemi\/grid_stress\/manifest\.json failed: .*ECONNREFUSED/,
    );
  });

  it('S3 slow: a read that stalls is aborted after the stall timeout', async () => {
    await survives({ kind: 'stall', afterBytes: 0 }, new RegExp(`stalled: no bytes received for ${STALL_MS} ms`));
  });

  it('S3 answers 500', async () => {
    await survives({ kind: 'http500' }, /InternalError, HTTP 500/);
  });

  it('a fault of the object read alone (the manifest was read) keeps the generation too', async () => {
    // Every connection is reset after CUT_AFTER bytes of answers: mid-object.
    await survives({ kind: 'cut', afterBytes: CUT_AFTER }, /^reading pemi\/grid_stress\/snapshots\/\d{8}\.arrow: .* failed/);
  });

  it('a source that recovers with nothing new clears the error and the failure count', async () => {
    await refreshGrid();
    served = (await s.status()).generation as number;
    await world.proxy.setMode({ kind: 'refuse' });
    try {
      expect((await refreshGrid()).outcome).toBe('unreachable');
    } finally {
      await world.proxy.setMode({ kind: 'pass' });
    }
    expect(await refreshGrid()).toMatchObject({ outcome: 'unchanged', generation_after: served });
    expect(await s.status()).toMatchObject({ generation: served, consecutive_failures: 0, last_error: null });
  });
});
