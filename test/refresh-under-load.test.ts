/**
 * Refresh while clients keep querying: several client loops read the whole dataset while
 * generations 2..6 are published and swapped in (snapshots built on worker threads; the even
 * ones as generations of two parts, contract 14, so a refresh goes from one object to parts
 * and back). No request may fail, and every answer must be exactly one generation's answer:
 * never a mix, never a half-built table.
 */
import { isDeepStrictEqual } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import type { SnapshotSource } from '../src/source/snapshot-source.js';
import { writePartsGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { startHarness } from './support/harness.js';
import { splitSpec } from './support/split-parts.js';
import {
  ALL_ROWS,
  GRID,
  GRID_ID,
  ManualTimers,
  T0,
  expectedValues,
  gridSpec,
  nextCheck,
  publish,
  request,
  serve,
  startS3World,
  type S3World,
} from './support/s3-harness.js';

const DATES = 25; // 100 rows a generation

/** Generation g of the grid: one object when g is odd, two parts (two zones each) when even. */
async function publishGrid(source: SnapshotSource, g: number): Promise<void> {
  if (g % 2 === 1) return publish(source, g, gridSpec(g, DATES));
  const parts = splitSpec(gridSpec(g, DATES), [2]).map((p) => buildArrowSnapshot(p));
  await writePartsGeneration(source, GRID, parts, g, '2026-11-01T00:00:00Z');
}
const GENERATIONS = [1, 2, 3, 4, 5, 6];
const LOOPS = 3;
/** answers each generation must get before the next one is published */
const PER_GENERATION = 4;
/**
 * The one bound of each test, which only turns a broken server into a failure instead of a
 * hang: the test waits on events (answers told by the client loops, the checks the loader
 * reports), however long a generation takes. Six worker builds under client load take
 * several times longer on a machine whose cores are busy with other suites than alone
 * (alone: 7-18 s for the whole test; 132 s at a load average of 26 on 2 cores), so no
 * generation gets a bound of its own: each waits for what is left of the test's.
 */
const TEST_BOUND_MS = 360_000;
/** the events' deadline is this much before the test's, so the loops stop and report first */
const WIND_DOWN_MS = 15_000;
const deadlineFromNow = (): number => Date.now() + TEST_BOUND_MS - WIND_DOWN_MS;

interface Load {
  /** answers per generation */
  readonly seen: Map<number, number>;
  readonly failures: string[];
  /**
   * Resolves once generation g got PER_GENERATION answers, or at the first failure. Told by
   * the client loops themselves (no polling); bounded by the test's deadline only so a
   * broken server fails the test instead of hanging it.
   */
  reached(g: number): Promise<void>;
  stop(): Promise<number>;
}

/** Client loops that check every answer against the generation it claims to be. */
function startLoad(url: string, deadline: number): Load {
  const seen = new Map<number, number>();
  const failures: string[] = [];
  const expected = new Map(GENERATIONS.map((g) => [g, expectedValues(g, DATES)]));
  let stopped = false;
  let total = 0;
  let waiter: { readonly g: number; readonly done: () => void } | null = null;
  const wake = (): void => {
    if (waiter !== null && ((seen.get(waiter.g) ?? 0) >= PER_GENERATION || failures.length > 0)) {
      waiter.done();
      waiter = null;
    }
  };
  const loop = async (): Promise<void> => {
    while (!stopped && failures.length < 5) {
      const r = await request(url, ALL_ROWS);
      total++;
      if (r.status !== 200) {
        failures.push(`HTTP ${r.status}: ${r.text.slice(0, 200)}`);
        wake();
        continue;
      }
      const values = (r.body.data as Array<{ value: number }>).map((row) => row.value);
      const g = Math.floor((values[0] ?? -1) / 1000);
      const claimed = r.body.metadata.generation as number;
      if (claimed !== g || !isDeepStrictEqual(values, expected.get(g)) || r.body.metadata.total_count !== values.length) {
        failures.push(`generation ${claimed} answered values ${values.slice(0, 3).join(',')}... (${values.length} rows)`);
        wake();
        continue;
      }
      seen.set(g, (seen.get(g) ?? 0) + 1);
      wake();
    }
  };
  const loops = Array.from({ length: LOOPS }, loop);
  return {
    seen,
    failures,
    reached(g) {
      let timeout: NodeJS.Timeout | undefined;
      const left = Math.max(1, deadline - Date.now());
      return Promise.race([
        new Promise<void>((done) => {
          waiter = { g, done };
          wake();
        }),
        new Promise<never>((_, fail) => {
          timeout = setTimeout(() => fail(new Error(`no ${PER_GENERATION} answers of generation ${g} before the test's deadline (${left} ms)`)), left);
        }),
      ]).finally(() => clearTimeout(timeout));
    },
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return total;
    },
  };
}

/** Publishes 2..6 in turn; `swapIn` makes the server pick generation g up. */
async function publishUnderLoad(url: string, deadline: number, next: (g: number) => Promise<void>, swapIn: (g: number) => Promise<void>): Promise<void> {
  const load = startLoad(url, deadline);
  let total = 0;
  try {
    await load.reached(1);
    for (const g of GENERATIONS.slice(1)) {
      await next(g);
      await swapIn(g);
      await load.reached(g);
    }
  } finally {
    total = await load.stop();
  }
  expect(load.failures).toEqual([]);
  expect([...load.seen.keys()].sort()).toEqual(GENERATIONS);
  expect(total).toBeGreaterThanOrEqual(GENERATIONS.length * PER_GENERATION);
  // Finally the last generation, and only it, is served.
  const last = await request(url, ALL_ROWS);
  expect((last.body.data as Array<{ value: number }>).map((r) => r.value)).toEqual(expectedValues(6, DATES));
}

describe('refresh under load', () => {
  it(
    'local folder, worker builds, POST /admin/refresh (two at once): zero failed requests, every answer is one whole generation',
    async () => {
      const deadline = deadlineFromNow();
      const h = await startHarness({ datasets: [{ ...GRID, spec: gridSpec(1, DATES) }], server: { build: 'worker' } });
      try {
        await publishUnderLoad(
          h.url,
          deadline,
          (g) => publishGrid(h.source, g),
          async (g) => {
            // Concurrent refreshes run one after the other: one loads, the other finds nothing new.
            const replies = await Promise.all([0, 1].map(() => h.get('/admin/refresh', 'test-key-admin', { method: 'POST' })));
            for (const r of replies) expect(r.status, r.text).toBe(200);
            expect(replies.flatMap((r) => r.body.changed as string[])).toEqual(['pemi/grid_stress']);
            const outcomes = replies.map((r) =>
              (r.body.datasets as Array<{ dataset: string; outcome: string; generation_after: number }>).find((d) => d.dataset === 'pemi/grid_stress')!,
            );
            expect(outcomes.map((o) => o.outcome).sort()).toEqual(['loaded', 'unchanged']);
            expect(outcomes.map((o) => o.generation_after)).toEqual([g, g]);
          },
        );
      } finally {
        await h.close();
      }
    },
    TEST_BOUND_MS,
  );

  describe('S3 through s3rver, worker builds, manifest polling', () => {
    let world: S3World;
    beforeAll(async () => {
      world = await startS3World('load');
    });
    afterAll(() => world.close());

    it(
      'zero failed requests, every answer is one whole generation, the last one is served',
      async () => {
        const deadline = deadlineFromNow();
        await publish(world.publisher, 1, gridSpec(1, DATES));
        // Polling on injected timers: the test fires each due check, the loader polls the real
        // s3rver, builds on worker threads and swaps while the client loops keep querying.
        const timers = new ManualTimers(new ManualClock(T0));
        // Three attempts per operation, as the product's source makes: s3rver closes a
        // keep-alive connection after 5 s idle, and a check that reuses it just then gets
        // "socket hang up", which the product retries on a new connection
        // (loader-s3-faults.test.ts). With one attempt that check failed the test.
        const source = world.openSource({ maxAttempts: 3 });
        const s = await serve(source, { build: 'worker', clock: timers.clock, timers, refreshIntervalMs: 20 });
        try {
          await publishUnderLoad(
            s.url,
            deadline,
            (g) => publishGrid(world.publisher, g),
            async (g) => {
              // Checks of the grid until it serves g: the first due check after publishing finds it.
              const checked = await nextCheck(s, timers, GRID_ID, deadline - Date.now());
              expect(checked).toMatchObject({ generation: g, last_error: null });
            },
          );
          expect((await s.status()).generation).toBe(6);
        } finally {
          await s.close();
        }
      },
      TEST_BOUND_MS,
    );
  });
});
