import { PAGE_SLOT_COST } from '../../src/format/arenas/page-arena.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalSource } from '../../src/source/local-source.js';
import { buildKeysConfig } from '../../src/auth/keys-file.js';
import { buildArrowSnapshot, type IpcFormat, type SnapshotSpec } from '../../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../../src/snapshot/write-generation.js';
import type { ApiHandler } from '../../src/api/api-handler.js';
import type { ServeOptions } from '../../src/config/serve-options.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/threads/start.js';
import { ManualClock, type Clock } from '../../src/time/clock.js';
import { inProcessRequest, inProcessTransport } from './in-process.js';

/** A dataset to publish into the harness's source folder before the server starts. */
export interface HarnessDataset {
  readonly productId: string;
  readonly dataset: string;
  readonly spec: SnapshotSpec;
  readonly generation?: number;
  readonly format?: IpcFormat;
}

export const TEST_KEY = 'test-key-all-products';
export const EU_KEY = 'test-key-eu-only';
export const ADMIN_KEY = 'test-key-admin';

/** Keys of every harness: one for all products, one for gbsi_eu and pemi only, one admin. */
export function defaultKeysJson(extra: object[] = []): object {
  return {
    keys: [
      { id: 'all', key: TEST_KEY, products: ['*'] },
      { id: 'eu', key: EU_KEY, products: ['gbsi_eu', 'pemi'] },
      { id: 'ops', key: ADMIN_KEY, products: ['*'], admin: true },
      ...extra,
    ],
  };
}

export interface Harness {
  /** the base URL; `in-process:` when requests go through the handler without a socket */
  readonly url: string;
  readonly transport: 'uws' | 'in-process';
  readonly dir: string;
  readonly source: LocalSource;
  readonly server: RunningServer;
  readonly clock: Clock;
  get(path: string, key?: string | null, init?: RequestInit): Promise<Reply>;
  /** the serving thread's cache counters (in process only: over uWS the handler is out of reach) */
  cacheStats(): ReturnType<ApiHandler['cacheStats']>;
  /** the API handler itself (in process only), for tests that hold answers as the transport receives them */
  handler(): ApiHandler;
  close(): Promise<void>;
}

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** parsed body (undefined when it is not JSON) */
  readonly body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * How tests run a server unless they say otherwise (the options' defaults are `pitcache
 * serve`'s): one serving thread, the caches, the failed-authentication limit and the
 * access log off.
 */
export const TEST_SERVER: Partial<ServeOptions> = {
  workers: 1,
  responseCacheBytes: 0,
  rowCacheBytes: 0,
  pageCacheBytes: 0,
  authFailLimit: { count: 0, windowMs: 60_000 },
  accessLog: false,
};

/** Publishes the datasets into a fresh temp folder and starts a real server on an ephemeral port. */
export interface HarnessOptions {
  readonly datasets: readonly HarnessDataset[];
  readonly keys?: object;
  readonly clock?: Clock;
  /** runs after the datasets are written, before the server starts (e.g. to break a file) */
  readonly prepare?: (dir: string) => Promise<void>;
  /** anything else startServer takes (timers, refresh interval, build mode, cache dir...) */
  readonly server?: Partial<StartOptions>;
  /** 'uws' (default): a real server on an ephemeral port; 'in-process': the same server's handler, called without a socket */
  readonly transport?: 'uws' | 'in-process';
}

/** startHarness without a socket: the contract suite's harness (same request helper, same wiring). */
export function startInProcessHarness(opts: Omit<HarnessOptions, 'transport'>): Promise<Harness> {
  return startHarness({ ...opts, transport: 'in-process' });
}

export async function startHarness(opts: HarnessOptions): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-test-'));
  const source = new LocalSource(dir);
  for (const d of opts.datasets) {
    const bytes = buildArrowSnapshot(d.spec, d.format ?? 'file');
    await writeGeneration(source, d, bytes, d.generation ?? 1, '2026-11-01T00:00:00Z');
  }
  await opts.prepare?.(dir);
  const clock = opts.clock ?? new ManualClock(Date.UTC(2026, 10, 20, 12, 0, 0));
  const inProcess = opts.transport === 'in-process' ? inProcessTransport() : null;
  const server = await startServer({
    ...TEST_SERVER,
    source,
    keys: buildKeysConfig(opts.keys ?? defaultKeysJson(), 'test keys'),
    host: '127.0.0.1',
    port: 0,
    clock,
    // Worker threads cost a TypeScript boot per test file; tests of refresh opt in.
    build: 'inline',
    refreshIntervalMs: 0,
    // Small, so that every server test also runs rows through the row cache and its evictions,
    // and JSON pages through two page slots.
    rowCacheBytes: 64 * 1024,
    pageCacheBytes: 2 * PAGE_SLOT_COST,
    ...opts.server,
    ...(inProcess === null ? {} : { transport: inProcess.transport }),
  });
  const url = inProcess === null ? `http://127.0.0.1:${server.port}` : 'in-process:';
  return {
    url,
    transport: inProcess === null ? 'uws' : 'in-process',
    dir,
    source,
    server,
    clock,
    get: (path, key = TEST_KEY, init = {}) => (inProcess === null ? request(url, path, key, init) : inProcessRequest(inProcess.handler(), path, key, init)),
    cacheStats: () => {
      if (inProcess === null) throw new Error('cache counters are read in process: use startInProcessHarness');
      return (inProcess.handler() as ApiHandler).cacheStats();
    },
    handler: () => {
      if (inProcess === null) throw new Error('the handler is reached in process only: use startInProcessHarness');
      return inProcess.handler() as ApiHandler;
    },
    async close() {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One HTTP request to a test server; the body is parsed when it is JSON. */
export async function request(url: string, path: string, key: string | null = TEST_KEY, init: RequestInit = {}): Promise<Reply> {
  const headers: Record<string, string> = key === null ? {} : { 'x-api-key': key };
  const res = await fetch(url + path, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}
