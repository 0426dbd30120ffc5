/**
 * Bad snapshots published to S3 (s3rver; the server reads through the fault proxy in
 * pass mode): a missing or malformed manifest, a manifest naming a missing object, bytes
 * that do not match the sha256, a schema contract 6 refuses, a generation that goes down.
 * Each keeps the last good generation served, shows in /admin/status, is logged once
 * however often it is checked, and the next good publication is loaded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ColumnSpec } from '../src/snapshot/arrow-writer.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import {
  GRID,
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

const MANIFEST = 'pemi/grid_stress/manifest.json';
/**
 * A manifest that does not parse is read again at every check (its etag is kept only once it
 * parsed), unlike a refused snapshot; either is fine as long as it is refused and logged once.
 */
const MALFORMED_AGAIN = ['refused', 'unchanged'];
const object = (g: number): string => `pemi/grid_stress/snapshots/${String(g).padStart(8, '0')}.arrow`;

let world: S3World;
let s: Served;
const clock = new ManualClock(T0);

beforeAll(async () => {
  world = await startS3World('bad');
  await publish(world.publisher, 1);
  // The source's stall watchdog on timers nobody fires: every outcome here is the source's
  // answer, never a stall that a loaded machine set off (a real 2 s watchdog made a refused
  // manifest come back "unreachable" now and then under `npm test`).
  const watchdog = new ManualTimers(new ManualClock(0));
  s = await serve(world.openSource({ timers: watchdog, clock: watchdog.clock }), { clock });
});
afterAll(async () => {
  await s?.close();
  await world?.close();
});

const values = (): Promise<unknown[]> => gridValues(s);
const refreshGrid = (): Promise<RefreshReport> => refreshReport(s);

interface Fault {
  /** publishes something bad as generation `next` */
  readonly breakIt: (next: number) => Promise<void>;
  readonly outcome: string;
  /** outcomes allowed for the check after that (a refused manifest is not read again until it changes) */
  readonly again?: readonly string[];
  readonly reason: RegExp;
  /** default: publish a good generation next+1 */
  readonly repair?: (next: number) => Promise<number>;
}

async function keepsLastGood(f: Fault): Promise<void> {
  // A clean start whatever an earlier test left behind.
  await refreshGrid();
  const served = (await s.status()).generation as number;
  const next = served + 1;
  await f.breakIt(next);
  let reason: string | null = null;
  for (const attempt of [1, 2]) {
    clock.advance(1000);
    const report = await refreshGrid();
    expect(attempt === 1 ? [f.outcome] : (f.again ?? [f.outcome])).toContain(report.outcome);
    expect(report).toMatchObject({ generation_before: served, generation_after: served });
    expect(report.error).toMatch(f.reason);
    reason ??= report.error;
    expect(report.error).toBe(reason);
    expect(await s.status()).toMatchObject({ state: 'loaded', generation: served, last_error: reason });
    expect(await values()).toEqual(expectedValues(served));
    expect(s.logs.failures(GRID_ID, reason!), 'logged once per change of reason').toHaveLength(1);
  }
  expect((await s.get('/readyz', null)).status).toBe(200);
  const good = f.repair === undefined ? next + 1 : await f.repair(next);
  if (f.repair === undefined) await publish(world.publisher, good);
  clock.advance(1000);
  expect(await refreshGrid()).toMatchObject({ outcome: 'loaded', generation_before: served, generation_after: good, error: null });
  expect(await s.status()).toMatchObject({ generation: good, last_error: null, consecutive_failures: 0 });
  expect(await values()).toEqual(expectedValues(good));
}

/** The manifest of generation g as JSON, with its object written (and valid). */
async function goodManifest(g: number): Promise<Record<string, unknown>> {
  return { ...(await writeGeneration(world.publisher, GRID, buildArrowSnapshot(gridSpec(g)), g, '2026-11-01T00:00:00Z')) };
}

/** gridSpec(g) with one column changed. */
function withColumn(g: number, name: string, change: (c: ColumnSpec) => ColumnSpec): ReturnType<typeof gridSpec> {
  const spec = gridSpec(g);
  return { ...spec, columns: spec.columns.map((c) => (c.name === name ? change(c) : c)) };
}

describe('a bad publication keeps the last good generation', () => {
  it('manifest missing (deleted)', async () => {
    await keepsLastGood({ breakIt: () => world.remove(MANIFEST), outcome: 'missing', reason: /^no manifest\.json at the source$/ });
  });

  it('manifest is not JSON', async () => {
    await keepsLastGood({
      breakIt: () => world.put(MANIFEST, '{"format": "pitcache-snap'),
      outcome: 'refused',
      again: MALFORMED_AGAIN,
      reason: /manifest\.json is not JSON/,
    });
  });

  it('manifest of another format', async () => {
    await keepsLastGood({
      breakIt: async (g) => world.put(MANIFEST, JSON.stringify({ ...(await goodManifest(g)), format: 'pitcache-snapshot/9' })),
      outcome: 'refused',
      again: MALFORMED_AGAIN,
      reason: /manifest\.json is invalid at format/,
    });
  });

  it('manifest names another dataset', async () => {
    await keepsLastGood({
      breakIt: async (g) => world.put(MANIFEST, JSON.stringify({ ...(await goodManifest(g)), dataset: 'other' })),
      outcome: 'refused',
      again: MALFORMED_AGAIN,
      reason: /manifest names pemi\/other/,
    });
  });

  it('the object the manifest names is not there; it loads once the object appears', async () => {
    let bytes: Uint8Array = new Uint8Array();
    await keepsLastGood({
      breakIt: async (g) => {
        bytes = buildArrowSnapshot(gridSpec(g));
        await writeGeneration(world.publisher, GRID, bytes, g, '2026-11-01T00:00:00Z');
        await world.remove(object(g));
      },
      // Refused, not "unreachable": the source answered, the object is absent.
      outcome: 'refused',
      reason: /^object pemi\/grid_stress\/snapshots\/\d{8}\.arrow is missing$/,
      repair: async (g) => {
        await world.put(object(g), bytes);
        return g;
      },
    });
  });

  it('the bytes do not match the sha256', async () => {
    await keepsLastGood({
      breakIt: async (g) => {
        await goodManifest(g);
        const bytes = Buffer.from(buildArrowSnapshot(gridSpec(g)));
        bytes.writeUInt8(bytes.readUInt8(bytes.length - 20) ^ 0xff, bytes.length - 20);
        await world.put(object(g), bytes);
      },
      outcome: 'refused',
      again: ['unchanged'],
      reason: /sha256 mismatch for snapshots\/\d{8}\.arrow/,
    });
  });

  it('schema refused: nanosecond timestamps', async () => {
    const ns = (c: ColumnSpec): ColumnSpec => ({
      name: c.name,
      type: 'timestamp',
      unit: 'ns',
      values: Array.from(c.values as ArrayLike<number>, (v) => BigInt(v) * 1000n),
    });
    await keepsLastGood({
      breakIt: (g) => publish(world.publisher, g, withColumn(g, 'str_observed_at', ns)),
      outcome: 'refused',
      again: ['unchanged'],
      reason: /column "str_observed_at": nanosecond timestamps are refused/,
    });
  });

  it('schema refused: the filter column is not in the series key', async () => {
    await keepsLastGood({
      breakIt: (g) => publish(world.publisher, g, { ...gridSpec(g), seriesKey: [] }),
      outcome: 'refused',
      again: ['unchanged'],
      reason: /filter column "bidding_zone" is not in the series key/,
    });
  });

  it('a generation number that goes down is refused', async () => {
    await keepsLastGood({
      breakIt: (g) => publish(world.publisher, g - 2),
      outcome: 'refused',
      again: ['unchanged'],
      reason: /manifest generation \d+ is below the served generation \d+; generations only go up/,
    });
  });
});
