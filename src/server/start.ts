import type { SnapshotSource } from '../../loaders/snapshot-source.js';
import { KeyRegistry } from '../auth/key-registry.js';
import type { KeysConfig } from '../auth/keys-file.js';
import { RateLimiter } from '../auth/rate-limiter.js';
import type { Handler } from '../http/types.js';
import { listen, type ListenOptions } from '../http/uws-server.js';
import type { AccessLog } from '../log/access-log.js';
import { silentLogger, type Logger, type LogLevel } from '../log/logger.js';
import { systemClock, type Clock } from '../time/clock.js';
import { createAdminOps } from './admin.js';
import { createApiHandler } from './api-handler.js';
import { DatasetRegistry } from './dataset-registry.js';
import { RequestIds } from './request-ids.js';
import { ServingPool } from './serving-pool.js';
import { SnapshotCache } from './snapshot-cache.js';
import { SnapshotLoader } from './snapshot-loader.js';
import { WorkerTableBuilder, inlineBuilder, type TableBuilder } from './table-builder.js';
import { realTimers, type Timers } from '../time/timers.js';

export interface StartOptions {
  readonly source: SnapshotSource;
  readonly keys: KeysConfig;
  readonly host: string;
  /** 0 = an ephemeral port */
  readonly port: number;
  readonly clock?: Clock;
  readonly timers?: Timers;
  readonly log?: Logger;
  readonly accessLog?: AccessLog | null;
  /** bytes of superseded generations kept for live cursors */
  readonly retainedBytes?: number;
  /** manifest polling period; 0 = only POST /admin/refresh (default 60 s) */
  readonly refreshIntervalMs?: number;
  /** how long start-up retries an unreachable source (default 60 s) */
  readonly startupTimeoutMs?: number;
  /** local folder for verified copies of the last good snapshots */
  readonly cacheDir?: string | null;
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** 'worker' (default): snapshots are decoded and indexed off the serving thread */
  readonly build?: 'worker' | 'inline';
  /** serving threads; 1 (default) serves on this thread */
  readonly workers?: number;
  /** log level of serving threads (they cannot share this thread's logger object); null = silent */
  readonly logLevel?: LogLevel | null;
  /** bytes of rendered bodies kept per serving thread for repeated queries; 0 = no cache */
  readonly responseCacheBytes?: number;
  /** bytes of rendered rows kept per serving thread for overlapping queries; 0 = no cache */
  readonly rowCacheBytes?: number;
  /**
   * Serves the API handler (one serving thread); default: uWS on host:port. Tests pass one
   * that keeps the handler and calls it in process (test/support/harness.ts), so the
   * contract suite runs the real wiring without a socket.
   */
  readonly transport?: Transport;
}

/** Puts a handler behind a listener; resolves with the bound port (0 when there is no socket) and how to stop it. */
export type Transport = (handler: Handler, opts: ListenOptions) => Promise<{ port: number; close(): void | Promise<void> }>;

export interface RunningServer {
  readonly port: number;
  readonly registry: DatasetRegistry;
  readonly loader: SnapshotLoader;
  close(): Promise<void>;
}

/**
 * Listens at once (so /healthz answers and /readyz says 503 while loading), loads every
 * named dataset, then resolves. Data requests before that answer 503 not_ready.
 */
export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const registry = new DatasetRegistry(opts.retainedBytes);
  const keys = new KeyRegistry(opts.keys);
  const builder: TableBuilder = opts.build === 'inline' ? inlineBuilder : new WorkerTableBuilder();
  const workers = opts.workers ?? 1;
  // Serving threads (if any) mirror every check: the pool observes the loader.
  const pool = workers > 1 ? new ServingPool(log) : null;
  const loader = new SnapshotLoader({
    ...(pool === null ? {} : { observer: pool }),
    source: opts.source,
    registry,
    builder,
    clock,
    timers: opts.timers ?? realTimers,
    log,
    refreshIntervalMs: opts.refreshIntervalMs ?? 60_000,
    startupTimeoutMs: opts.startupTimeoutMs ?? 60_000,
    cache: opts.cacheDir ? new SnapshotCache(opts.cacheDir) : null,
    ...(opts.backoffBaseMs === undefined ? {} : { backoffBaseMs: opts.backoffBaseMs }),
    ...(opts.backoffMaxMs === undefined ? {} : { backoffMaxMs: opts.backoffMaxMs }),
  });
  const access = opts.accessLog ?? null;
  const admin = createAdminOps(registry, loader);
  const limiter = new RateLimiter(keys, clock);
  const responseCacheBytes = opts.responseCacheBytes ?? 0;
  const rowCacheBytes = opts.rowCacheBytes ?? 0;
  let server: { port: number; close(): void | Promise<void> };
  if (pool !== null) {
    const port = await pool.start(
      workers,
      {
        host: opts.host,
        port: opts.port,
        keys: opts.keys,
        limiter: limiter.state,
        clock: clock.shared,
        retainedBytes: opts.retainedBytes,
        accessLog: access !== null,
        logLevel: opts.logLevel ?? null,
        responseCacheBytes,
        rowCacheBytes,
      },
      admin,
    );
    server = { port, close: () => pool.close() };
  } else {
    const handler = createApiHandler({
      registry,
      keys,
      limiter,
      clock,
      ids: new RequestIds(),
      log,
      admin,
      responseCacheBytes,
      rowCacheBytes,
      ...(access === null ? {} : { access: (r) => access.write(r) }),
    });
    server = await (opts.transport ?? listen)(handler, {
      host: opts.host,
      port: opts.port,
      onError: (err, requestId) => log.error('transport fault', { record_id: requestId, error: String(err) }),
    });
  }
  log.info('listening', { host: opts.host, port: server.port, source: opts.source.description });
  await loader.start();
  log.info('ready', { datasets: registry.slots.filter((s) => s.state === 'loaded').length, of: registry.slots.length });
  return {
    port: server.port,
    registry,
    loader,
    close: async () => {
      loader.stop();
      await server.close();
      await builder.close();
      access?.flush();
    },
  };
}
