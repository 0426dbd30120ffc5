/**
 * Server-level tests of refresh, faults and the admin endpoints: a real S3 protocol server
 * (s3rver) behind the real TCP fault proxy, a real server reading through the proxy, and
 * the tools those tests share (timers the test fires, a log sink that keeps lines,
 * generations with values that name them).
 */
import { createServer, type AddressInfo } from 'node:net';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { S3Source, type S3SourceOptions } from '../../src/source/s3-source.js';
import type { SnapshotSource } from '../../src/source/snapshot-source.js';
import { buildKeysConfig } from '../../src/auth/keys-file.js';
import { createLogger, type LogSink } from '../../src/log/logger.js';
import { buildArrowSnapshot, type SnapshotSpec } from '../../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../../src/snapshot/write-generation.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/threads/start.js';
import { ManualTimers as BaseManualTimers } from '../../src/time/manual-timers.js';
import { ManualClock } from '../../src/time/clock.js';
import { activeTimers, type Timers } from '../../src/time/timers.js';
import { expect } from 'vitest';
import { pitSnapshot, rowsOf, type PitRow } from './fixtures.js';
import { ADMIN_KEY, defaultKeysJson, request, TEST_SERVER, type Reply } from './harness.js';

export { request };
import { startS3rver, testS3Client, type TestS3 } from './s3rver.js';
import { TcpFaultProxy } from './tcp-fault-proxy.js';

export const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
export const GRID = { productId: 'pemi', dataset: 'grid_stress' } as const;
export const GRID_ID = 'pemi/grid_stress';
/** Every row of the dataset in one page, in the contract's order. */
export const ALL_ROWS = '/pemi/grid_stress?latest=false&limit=10000';

const ZONES = ['DE', 'FR', 'NL', 'PL'];

/**
 * Generation `g` of pemi/grid_stress: `dates` dates x 4 zones, written in response order
 * (date, then zone), so row i of a full answer has value g*1000 + i.
 */
export function gridRows(g: number, dates = 5): PitRow[] {
  const rows: PitRow[] = [];
  for (let d = 0; d < dates; d++) {
    const date = new Date(Date.UTC(2026, 3, 1 + d)).toISOString().slice(0, 10);
    for (const z of ZONES) rows.push({ key: { bidding_zone: z }, date, eff: date, obs: `${date}T06:00:00Z`, tag: `g${g}`, value: g * 1000 + rows.length });
  }
  return rows;
}

export const gridSpec = (g: number, dates = 5): SnapshotSpec => pitSnapshot(['bidding_zone'], gridRows(g, dates));
export const expectedValues = (g: number, dates = 5): number[] => gridRows(g, dates).map((r) => r.value!);

/** A source with a snapshot published into it (publishing never goes through the proxy). */
export async function publish(source: SnapshotSource, g: number, spec: SnapshotSpec = gridSpec(g)): Promise<void> {
  await writeGeneration(source, GRID, buildArrowSnapshot(spec), g, '2026-11-01T00:00:00Z');
}

/**
 * The stall time of the servers' sources, and their timers: the stall watchdog (the only
 * timer set at HELD_STALL_MS: backoffs are capped at retryMaxMs) is held and never fires, so
 * a loaded machine that slows s3rver down never passes for a stall (a real 2 s watchdog, and
 * the SDK's connection timeout at the same 2 s, made a refused manifest or a generation
 * under load come back "unreachable" now and then); the retry backoff runs on real timers,
 * so a source given more than one attempt retries as the product's does. The stall time
 * only sizes the SDK's own socket timeouts, bounds a broken test never reaches.
 */
const HELD_STALL_MS = 30_000;
const HELD = Symbol('held stall watchdog');
const heldStallTimers: Timers = {
  setTimeout: (fn, ms) => (ms >= HELD_STALL_MS ? HELD : activeTimers.setTimeout(fn, ms)),
  clearTimeout: (handle) => {
    if (handle !== HELD) activeTimers.clearTimeout(handle);
  },
};

/** s3rver, the fault proxy in front of it, and a publisher that talks to s3rver directly. */
export interface S3World {
  readonly s3: TestS3;
  readonly proxy: TcpFaultProxy;
  readonly location: string;
  readonly publisher: S3Source;
  /** A source for the server: through the proxy, one attempt per operation unless told (the stall watchdog held, see HELD_STALL_MS). */
  openSource(options?: S3SourceOptions): S3Source;
  put(path: string, body: Uint8Array | string): Promise<void>;
  remove(path: string): Promise<void>;
  close(): Promise<void>;
}

export async function startS3World(prefix = 'pit'): Promise<S3World> {
  const s3 = await startS3rver();
  const proxy = await TcpFaultProxy.start(Number(new URL(s3.endpoint).port));
  const location = `s3://${s3.bucket}/${prefix}`;
  const clients: S3Client[] = [];
  const key = (path: string): string => `${prefix}/${path}`;
  return {
    s3,
    proxy,
    location,
    publisher: new S3Source(location, { client: s3.client, conditionalWrites: 'unsupported' }),
    openSource(options = {}) {
      // An explicit client carries the credentials s3rver wants, with no process env.
      const client = testS3Client(proxy.endpoint, 1);
      clients.push(client);
      return new S3Source(location, {
        client,
        maxAttempts: 1,
        stallTimeoutMs: HELD_STALL_MS,
        timers: heldStallTimers,
        retryBaseMs: 5,
        retryMaxMs: 20,
        ...options,
      });
    },
    async put(path, body) {
      await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key(path), Body: body }));
    },
    async remove(path) {
      await s3.client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: key(path) }));
    },
    async close() {
      for (const c of clients) c.destroy();
      await proxy.close();
      await s3.close();
    },
  };
}

/** Keeps every log line, parsed. */
export class LogCapture implements LogSink {
  readonly lines: Array<Record<string, unknown>> = [];
  write(chunk: string): void {
    for (const line of chunk.split('\n')) if (line !== '') this.lines.push(JSON.parse(line) as Record<string, unknown>);
  }
  /** Lines that report a failure of one dataset with exactly this reason (from line `from` on). */
  failures(dataset: string, reason: string, from = 0): Array<Record<string, unknown>> {
    return this.lines.slice(from).filter((l) => l['dataset'] === dataset && l['reason'] === reason);
  }
}

/** The shared manual timers, plus the steps the loader tests take on them. */
export class ManualTimers extends BaseManualTimers {
  private setWaiters: Array<{ readonly n: number; readonly done: () => void }> = [];

  override setTimeout(callback: () => void, ms: number): unknown {
    const handle = super.setTimeout(callback, ms);
    const n = this.requested.length;
    this.setWaiters = this.setWaiters.filter((w) => {
      if (n <= w.n) return true;
      w.done();
      return false;
    });
    return handle;
  }

  /**
   * Fires the earliest timer and waits until some timer is pending. When only the loader's
   * timer exists that is its next check; other pending timers (retained generations' idle
   * release) make it return at once, so nextCheck also waits for the check's outcome.
   */
  async step(): Promise<void> {
    this.fire();
    await this.armed('the loader to schedule its next check');
  }

  /**
   * Resolves once more than `n` timers were set in all (`requested.length`): the event of a
   * check that is over (the loader sets the next one). The real-time bound only turns a
   * broken server into a failure; a slow machine is waited for.
   */
  setSince(n: number, what: string, realMs: number): Promise<void> {
    if (this.requested.length > n) return Promise.resolve();
    let timeout: NodeJS.Timeout | undefined;
    return Promise.race([
      new Promise<void>((done) => this.setWaiters.push({ n, done })),
      new Promise<never>((_, fail) => {
        timeout = setTimeout(() => fail(new Error(`waited ${realMs} ms for ${what}; no timer was set`)), realMs);
      }),
    ]).finally(() => clearTimeout(timeout));
  }
}

const macrotask = (): Promise<void> => new Promise((done) => setImmediate(done));

/**
 * Fires start-up sleeps until `start` resolves. A timer set just before it resolves is the
 * first refresh check, not a start-up sleep: the microtasks after the loader's start have
 * run by the next macrotask, so `start` has settled by then if it is going to.
 */
export async function driveStartup<T>(start: Promise<T>, timers: ManualTimers): Promise<{ value: T; sleeps: number[] }> {
  let settled = false;
  start.then(
    () => (settled = true),
    () => (settled = true),
  );
  const sleeps: number[] = [];
  for (;;) {
    await Promise.race([start.then(() => undefined), timers.armed('a start-up sleep or the first check')]);
    await macrotask();
    if (settled) return { value: await start, sleeps };
    sleeps.push(timers.nextDue()! - timers.clock.now());
    timers.fire();
  }
}

export interface Served {
  readonly url: string;
  readonly server: RunningServer;
  readonly logs: LogCapture;
  get(path: string, key?: string | null, init?: RequestInit): Promise<Reply>;
  /** POST /admin/refresh with the admin key. */
  refresh(): Promise<Reply>;
  /** GET /admin/status, this dataset's entry. */
  status(dataset?: string): Promise<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  close(): Promise<void>;
}

/** A real server on `source` (inline builds, no polling, a ManualClock unless told otherwise). */
export function serve(source: SnapshotSource, opts: Partial<StartOptions> = {}): Promise<Served> {
  const logs = new LogCapture();
  const clock = opts.clock ?? new ManualClock(T0);
  return startServer({
    ...TEST_SERVER,
    source,
    keys: buildKeysConfig(defaultKeysJson(), 'test keys'),
    host: '127.0.0.1',
    port: 0,
    clock,
    log: createLogger({ sink: logs, clock }),
    build: 'inline',
    refreshIntervalMs: 0,
    ...opts,
  }).then((server): Served => {
    const url = `http://127.0.0.1:${server.port}`;
    return {
      url,
      server,
      logs,
      get: (path, key, init) => request(url, path, key, init),
      refresh: () => request(url, '/admin/refresh', ADMIN_KEY, { method: 'POST' }),
      async status(dataset = GRID_ID) {
        const r = await request(url, '/admin/status', ADMIN_KEY);
        if (r.status !== 200) throw new Error(`/admin/status answered ${r.status}: ${r.text}`);
        const entry = (r.body.datasets as Array<Record<string, unknown>>).find((d) => d['dataset'] === dataset);
        if (entry === undefined) throw new Error(`/admin/status has no ${dataset}: ${r.text}`);
        return entry;
      },
      close: () => server.close(),
    };
  });
}

/** A port that was free a moment ago (to reach a server before startServer resolves). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((done) => srv.listen(0, '127.0.0.1', done));
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((done) => srv.close(() => done()));
  return port;
}

/**
 * How long nextCheck waits for a check before it calls the server broken: a read and a
 * worker build, which can take tens of seconds on a machine whose cores other suites keep
 * busy. A test's own timeout usually ends it first.
 */
export const CHECK_BOUND_MS = 120_000;

/**
 * Fires the loader's timers in order (other datasets keep their own schedules) until
 * `dataset` has been checked once more; returns its /admin/status entry then, after
 * checking that the check ran exactly when it was scheduled.
 *
 * A check is over once its next check is set after it (`next_check` > `last_check`: the
 * loader sets it last, in the same turn as the check's outcome and the timer of the next
 * check). So between looks at /admin/status this waits for a timer to be set, never for
 * time to pass. Until the check is over no timer due after this check is fired: other
 * timers (the retained generations' idle release) can be pending while the check still
 * runs, and firing one would move the clock under it.
 */
export async function nextCheck(s: Served, timers: ManualTimers, dataset = GRID_ID, boundMs = CHECK_BOUND_MS): Promise<Record<string, unknown>> {
  const before = await s.status(dataset);
  const due = Date.parse(before['next_check'] as string);
  const failAt = Date.now() + boundMs;
  for (let fired = 0; fired < 100;) {
    // Timers set from here on are news: a set between the look below and the wait is not missed.
    const seen = timers.requested.length;
    const next = timers.nextDue();
    const firing = next !== null && next <= due;
    if (firing) {
      timers.fire();
      fired++;
    }
    const now = await s.status(dataset);
    const over = Date.parse(now['next_check'] as string) > Date.parse(now['last_check'] as string);
    if (now['last_check'] !== before['last_check'] && over) {
      expect(now['last_check'], 'checked when it was due').toBe(before['next_check']);
      return now;
    }
    if (!firing) await timers.setSince(seen, `the check of ${dataset} to end`, Math.max(1, failAt - Date.now()));
  }
  throw new Error(`${dataset} was not checked within 100 timer firings`);
}

/** The `value` column of every row of the grid dataset, in answer order. */
export async function gridValues(s: Served): Promise<unknown[]> {
  return rowsOf(await s.get(ALL_ROWS)).map((r) => r['value']);
}

export type RefreshReport = { outcome: string; generation_before: number | null; generation_after: number | null; error: string | null };

/** POST /admin/refresh, this dataset's entry of the answer. */
export async function refreshReport(s: Served, dataset = GRID_ID): Promise<RefreshReport> {
  const r = await s.refresh();
  expect(r.status, r.text).toBe(200);
  return (r.body.datasets as Array<RefreshReport & { dataset: string }>).find((d) => d.dataset === dataset)!;
}
