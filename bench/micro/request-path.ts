/**
 * tinybench of whole data requests through createApiHandler (parse -> resolve -> write ->
 * envelope) in each format, in process (no socket), on the demo's gbsi_eu/system_stress built as the
 * server builds it. Measures what the request-path seams (issue 12) could cost: run it
 * before and after a change to that path. Run: `npx tsx bench/micro/request-path.ts [--quick]`.
 */
import { pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import { DEMO_DATASETS, DEMO_KEY, demoKeysConfig, demoSnapshotSpec } from '../../src/demo/index.js';
import { KeyRegistry } from '../../src/auth/key-registry.js';
import { RateLimiter } from '../../src/auth/rate-limiter.js';
import type { HttpRequest, HttpResponse } from '../../src/http/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { resolveServeOptions } from '../../src/config/serve-options.js';
import { createApiHandler } from '../../src/api/api-handler.js';
import { DatasetRegistry } from '../../src/generations/dataset-registry.js';
import { makeGeneration, nextGenerationUid } from '../../src/generations/generation.js';
import { RequestIds } from '../../src/api/request-ids.js';
import { buildArrowSnapshot } from '../../src/snapshot/arrow-writer.js';
import type { Manifest } from '../../src/snapshot/manifest.js';
import { buildTable } from '../../src/store/build-table.js';
import { decodeArrowSnapshot } from '../../src/store/decode-arrow.js';
import { ManualClock } from '../../src/time/clock.js';

const DATASET = 'gbsi_eu/system_stress';

/** Each case: a name, a query, and the endpoint under the dataset's path ('' or '/walk_forward'). */
const FORMATS = ['json', 'csv', 'arrow'] as const;

const CASES: ReadonlyArray<readonly [string, string, string]> = [
  ['latest (all series)', '', ''],
  ['walk-forward step (one series, 90 days as of D)', 'country=DE&date_from=2025-06-01&date_to=2025-08-30&as_of=2025-08-30', ''],
  ['history page (10000 rows)', 'latest=false&limit=10000', ''],
  ['walk_forward page (all series, 90-day windows, 10000 rows)', 'decision_from=2025-01-01&decision_to=2025-12-31&window=90&limit=10000', '/walk_forward'],
];

export interface RequestPathResult {
  readonly name: string;
  readonly meanUs: number;
  readonly p99Us: number;
  readonly bytes: number;
}

export async function runRequestPath(quick: boolean): Promise<RequestPathResult[]> {
  const def = DEMO_DATASETS.find((d) => `${d.productId}/${d.dataset}` === DATASET)!;
  const bytes = buildArrowSnapshot(demoSnapshotSpec(def));
  const registry = new DatasetRegistry();
  const slot = registry.byName(DATASET)!;
  const table = buildTable(decodeArrowSnapshot(bytes), slot.floorUs);
  const manifest = { generation: 1 } as Manifest;
  slot.swap(makeGeneration({ number: 1, uid: nextGenerationUid(), manifest, table, loadedAtMs: 0, loadMs: 0 }));
  registry.markReady();
  const clock = new ManualClock(Date.UTC(2026, 10, 20));
  const keys = new KeyRegistry(demoKeysConfig());
  const make = (responseCacheBytes: number, rowCacheBytes: number) =>
    createApiHandler({
      registry,
      keys,
      limiter: new RateLimiter(keys, clock),
      clock,
      ids: new RequestIds(),
      log: silentLogger,
      options: resolveServeOptions({ workers: 1, responseCacheBytes, rowCacheBytes, pageCacheBytes: 0 }),
    });
  const uncached = make(0, 0);
  const plain = make(0, 64 * 1024 * 1024);
  const cached = make(64 * 1024 * 1024, 64 * 1024 * 1024);
  const req = (q: string, endpoint: string): HttpRequest => ({
    method: 'GET',
    path: `/${DATASET}${endpoint}`,
    rawQuery: q,
    apiKey: DEMO_KEY,
    accept: '',
    acceptEncoding: '',
    ifNoneMatch: '',
  });
  const bench = new Bench(quick ? { time: 300, warmupTime: 100 } : { time: 1500, warmupTime: 400 });
  const sizes = new Map<string, number>();
  let sink = 0;
  for (const [base, q0, endpoint] of CASES) {
    for (const format of FORMATS) {
      const q = format === 'json' ? q0 : `${q0}${q0 === '' ? '' : '&'}format=${format}`;
      const name = `${base}, ${format}`;
      const r = req(q, endpoint);
      const first = plain(r) as HttpResponse;
      if (first.status !== 200) throw new Error(`${name}: ${first.status} ${Buffer.from(first.body).toString()}`);
      // The row cache holds rendered text rows: Arrow has nothing to take from it.
      const modes =
        format === 'arrow'
          ? ([
              ['no cache', uncached],
              ['response cache hit', cached],
            ] as const)
          : ([
              ['no cache', uncached],
              ['row cache', plain],
              ['response cache hit', cached],
            ] as const);
      for (const [label, h] of modes) {
        const task = `${name}, ${label}`;
        sizes.set(task, first.body.byteLength);
        bench.add(task, () => {
          sink += (h(r) as HttpResponse).body.byteLength;
        });
      }
    }
  }
  await bench.run();
  if (sink < 0) console.log(sink);
  return bench.tasks.map((t) => {
    const r = t.result;
    const ok = r !== undefined && 'latency' in r;
    return { name: t.name, meanUs: ok ? r.latency.mean * 1000 : NaN, p99Us: ok ? (r.latency.p99 ?? NaN) * 1000 : NaN, bytes: sizes.get(t.name) ?? 0 };
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const x of await runRequestPath(process.argv.includes('--quick'))) {
    console.log(`${x.name.padEnd(72)} mean ${x.meanUs.toFixed(1).padStart(8)} µs  p99 ${x.p99Us.toFixed(1).padStart(8)} µs  ${x.bytes} B`);
  }
}
