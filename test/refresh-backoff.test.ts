/**
 * Per-dataset capped exponential backoff of the manifest polling: consecutive failures
 * space the next checks by base * 2^(n-1), capped; a success goes back to the refresh
 * interval. Time is a ManualClock and the loader's timers fire only when the test says so;
 * the schedule is read from /admin/status (`next_check`, `consecutive_failures`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/time/clock.js';
import { rowsOf } from './support/fixtures.js';
import {
  ALL_ROWS,
  GRID_ID,
  ManualTimers,
  T0,
  expectedValues,
  nextCheck,
  publish,
  serve,
  startS3World,
  type S3World,
  type Served,
} from './support/s3-harness.js';

const INTERVAL = 60_000;
const BASE = 1000;
const MAX = 8000;

let world: S3World;
let s: Served;
const clock = new ManualClock(T0);
const timers = new ManualTimers(clock);

beforeAll(async () => {
  world = await startS3World('backoff');
  await publish(world.publisher, 1);
  s = await serve(world.openSource(), { clock, timers, refreshIntervalMs: INTERVAL, backoffBaseMs: BASE, backoffMaxMs: MAX });
});
afterAll(async () => {
  await s?.close();
  await world?.close();
});

const ms = (iso: unknown): number => Date.parse(iso as string);

const nextCheckOfGrid = (): Promise<Record<string, unknown>> => nextCheck(s, timers);

describe('backoff of a failing dataset', () => {
  it('consecutive failures space the next checks by capped exponential delays; a success resets it', async () => {
    const first = await s.status();
    expect(first).toMatchObject({
      generation: 1,
      consecutive_failures: 0,
      last_check: new Date(T0).toISOString(),
      next_check: new Date(T0 + INTERVAL).toISOString(),
    });

    await world.proxy.setMode({ kind: 'refuse' });
    const delays: number[] = [];
    let reason: unknown = null;
    try {
      for (const n of [1, 2, 3, 4, 5, 6]) {
        const st = await nextCheckOfGrid();
        expect(st).toMatchObject({ consecutive_failures: n, generation: 1, state: 'loaded' });
        expect(st['last_error']).toMatch(/ECONNREFUSED/);
        reason ??= st['last_error'];
        delays.push(ms(st['next_check']) - ms(st['last_check']));
        // Served from the last good generation all along.
        expect(rowsOf(await s.get(ALL_ROWS)).map((r) => r['value'])).toEqual(expectedValues(1));
      }
    } finally {
      await world.proxy.setMode({ kind: 'pass' });
    }
    expect(delays).toEqual([1000, 2000, 4000, 8000, 8000, 8000]);
    expect(s.logs.failures(GRID_ID, reason as string), 'six failures, one reason, one log line').toHaveLength(1);

    await publish(world.publisher, 2);
    const recovered = await nextCheckOfGrid();
    expect(recovered).toMatchObject({ generation: 2, consecutive_failures: 0, last_error: null });
    expect(ms(recovered['next_check']) - ms(recovered['last_check'])).toBe(INTERVAL);

    // After a success, the next failure starts again from the base delay.
    const unchanged = await nextCheckOfGrid();
    expect(unchanged).toMatchObject({ generation: 2, consecutive_failures: 0 });
    await world.proxy.setMode({ kind: 'refuse' });
    try {
      const again = await nextCheckOfGrid();
      expect(again).toMatchObject({ consecutive_failures: 1 });
      expect(ms(again['next_check']) - ms(again['last_check'])).toBe(BASE);
    } finally {
      await world.proxy.setMode({ kind: 'pass' });
    }
  });

  it('POST /admin/refresh checks at once whatever the backoff, and reschedules', async () => {
    await world.proxy.setMode({ kind: 'refuse' });
    try {
      const before = await s.status();
      const due = ms(before['next_check']);
      expect(due).toBeGreaterThan(clock.now());
      const r = await s.refresh();
      expect((r.body.datasets as Array<{ dataset: string; outcome: string }>).find((d) => d.dataset === GRID_ID)!.outcome).toBe('unreachable');
      const st = await s.status();
      expect(st['last_check']).toBe(new Date(clock.now()).toISOString());
      expect(st['consecutive_failures']).toBe((before['consecutive_failures'] as number) + 1);
      expect(ms(st['next_check']) - clock.now()).toBe(Math.min(MAX, BASE * 2 ** ((st['consecutive_failures'] as number) - 1)));
    } finally {
      await world.proxy.setMode({ kind: 'pass' });
    }
    await publish(world.publisher, 3);
    const ok = await nextCheckOfGrid();
    expect(ok).toMatchObject({ generation: 3, consecutive_failures: 0, last_error: null });
  });
});
