import type { SnapshotSource } from '../source/snapshot-source.js';
import { KeyRegistry } from '../auth/key-registry.js';
import type { KeysConfig } from '../auth/keys-file.js';
import { RateLimiter } from '../auth/rate-limiter.js';
import { DatasetSelection } from '../catalog/dataset-selection.js';
import { catalogDocument } from '../catalog/catalog-document.js';
import { readCatalogAtStart, type CatalogAtStart } from '../generations/catalog-at-start.js';
import type { Handler } from '../http/types.js';
import { listen, type ListenOptions, type UwsServer } from '../http/uws-server.js';
import type { AccessLog } from '../log/access-log.js';
import { silentLogger, type Logger, type LogLevel } from '../log/logger.js';
import { prometheusText, type MetricsSnapshot } from '../metrics/aggregate.js';
import { DatasetMetrics } from '../generations/dataset-metrics.js';
import { listenMetrics } from '../metrics/metrics-server.js';
import { allocateRowArena } from '../format/arenas/row-arena.js';
import { DEFAULT_ROW_ADMISSION, type RowAdmission } from '../format/arenas/row-doorkeeper.js';
import { systemClock, type Clock } from '../time/clock.js';
import { createAdminOps } from '../api/admin.js';
import { DatasetRegistry } from '../generations/dataset-registry.js';
import { GenerationHistory } from '../generations/generation-history.js';
import { GenerationReaper } from '../generations/generation-reaper.js';
import { RequestIds } from '../api/request-ids.js';
import { RetainedGenerations } from '../generations/retained-generations.js';
import { DEFAULT_BUDGET, DEFAULT_CURSOR_IDLE_MS, RetentionBudget, type Budget } from '../generations/retention-budget.js';
import { bothObservers } from '../generations/slot-observer.js';
import { ServingMetrics } from './serving-metrics.js';
import { serveThread } from './serving-thread.js';
import { authFailureMemory, type AuthFailLimit } from '../auth/auth-throttle.js';
import { TrustedProxies } from '../auth/client-address.js';
import { ServingPool } from './serving-pool.js';
import { SnapshotCache } from '../generations/snapshot-cache.js';
import { SnapshotLoader } from '../generations/snapshot-loader.js';
import { WorkerTableBuilder, inlineBuilder, type TableBuilder } from '../generations/table-builder.js';
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
  /** what superseded generations may hold, across all datasets (`--retain-memory`; default 25% of the live bytes) */
  readonly retainMemory?: Budget;
  /** a superseded generation no cursor used for this long is released (`--cursor-idle`; default 10 min) */
  readonly cursorIdleMs?: number;
  /** failed authentications per client address before 429 (`--auth-fail-limit`; the CLI's default is 30/60s, absent here = off) */
  readonly authFailLimit?: AuthFailLimit;
  /** proxies whose X-Forwarded-For names the client (`--trusted-proxies`; default none) */
  readonly trustedProxies?: TrustedProxies;
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
  /**
   * asof_join bodies (gzip undone) larger than this are joined on a join worker of the
   * serving thread, smaller ones on it (default 256 KiB: docs/decisions.md#join-off-thread);
   * Infinity = every join on the serving thread
   */
  readonly joinInlineBytes?: number;
  /** log level of serving threads (they cannot share this thread's logger object); null = silent */
  readonly logLevel?: LogLevel | null;
  /** bytes of rendered bodies kept per serving thread for repeated queries; 0 = no cache */
  readonly responseCacheBytes?: number;
  /** bytes of rendered rows kept for overlapping queries, one arena shared by every serving thread; 0 = no cache */
  readonly rowCacheBytes?: number;
  /** bytes of whole pages kept beside the row arena, shared by every serving thread (page-cache.ts); 0 = none */
  readonly pageCacheBytes?: number;
  /** when a rendered row is kept (row-doorkeeper.ts); default DEFAULT_ROW_ADMISSION (on its second render) */
  readonly rowCacheAdmission?: RowAdmission;
  /** the datasets this replica loads and serves (`--datasets`); default all */
  readonly datasets?: DatasetSelection;
  /** the catalog in force at the source, read by the caller (`pitcache serve` exits 2 without one); absent = read here */
  readonly catalog?: CatalogAtStart;
  /** a second listener serving only GET /metrics, without a key; 0 = an ephemeral port; absent or null = none */
  readonly metricsPort?: number | null;
  /**
   * Serves the API handler (one serving thread); default: uWS on host:port. Tests pass one
   * that keeps the handler and calls it in process (test/support/harness.ts), so the
   * contract suite runs the real wiring without a socket.
   */
  readonly transport?: Transport;
}

/**
 * Puts a handler behind a listener; resolves with the bound port (0 when there is no
 * socket) and how to stop it (a transport without a socket has nothing to stop listening
 * to and nothing in flight).
 */
export type Transport = (handler: Handler, opts: ListenOptions) => Promise<Listener>;

interface Listener {
  readonly port: number;
  stopListening?(): void | Promise<void>;
  idle?(): Promise<void>;
  close(): void | Promise<void>;
}

export interface RunningServer {
  readonly port: number;
  /** the port of the metrics listener, or null when there is none */
  readonly metricsPort: number | null;
  readonly registry: DatasetRegistry;
  readonly loader: SnapshotLoader;
  /** GET /metrics: the Prometheus text, one view across every thread */
  metrics(): Promise<string>;
  /** SIGTERM: /readyz answers 503 on every thread from now on; requests are still answered */
  drain(): void;
  /** Stops accepting connections on every listener; open connections are still answered. */
  stopListening(): Promise<void>;
  /** Resolves once no response is in flight on any thread. */
  idle(): Promise<void>;
  /** Installs the keys of a reloaded keys file on every thread (buckets of unchanged keys carry over). */
  replaceKeys(keys: KeysConfig): void;
  close(): Promise<void>;
}

/**
 * asof_join bodies (gzip undone) up to this are joined on the serving thread: a few thousand
 * events, a few milliseconds. Larger ones go to its join worker (docs/decisions.md#join-off-thread).
 */
export const DEFAULT_JOIN_INLINE_BYTES = 256 * 1024;

const OFF: AuthFailLimit = { count: 0, windowMs: 60_000 };

/**
 * Listens at once (so /healthz answers and /readyz says 503 while loading), loads every
 * named dataset, then resolves. Data requests before that answer 503 not_ready.
 */
export async function startServer(opts: StartOptions): Promise<RunningServer> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const selection = opts.datasets ?? DatasetSelection.all();
  const initial = opts.catalog ?? (await readCatalogAtStart(opts.source, log));
  const registry = new DatasetRegistry(selection, initial.catalog);
  const unmatched = selection.unmatched(initial.catalog);
  if (unmatched.length > 0) log.warn('--datasets patterns match no dataset of the catalog yet', { patterns: unmatched });
  const keys = new KeyRegistry(opts.keys);
  const builder: TableBuilder = opts.build === 'inline' ? inlineBuilder : new WorkerTableBuilder();
  const workers = opts.workers ?? 1;
  // Serving threads (if any) mirror every check: the pool observes the loader.
  const pool = workers > 1 ? new ServingPool(log, registry) : null;
  const timers = opts.timers ?? realTimers;
  const cursorIdleMs = opts.cursorIdleMs ?? DEFAULT_CURSOR_IDLE_MS;
  // What this thread releases is collected here at once (each serving thread has its own).
  // On real timers: when V8 collects is the machine's business, not the server's clock's.
  const reaper = new GenerationReaper(realTimers);
  // Superseded generations under one budget; those it released (or never held) load again from history/.
  const retained = new RetainedGenerations(
    {
      registry,
      budget: new RetentionBudget(opts.retainMemory ?? DEFAULT_BUDGET, cursorIdleMs),
      history: new GenerationHistory({ source: opts.source, clock, builder }),
      clock,
      timers,
      log,
      reaper,
      ...(pool === null ? {} : { listener: pool }),
    },
    cursorIdleMs,
  );
  const datasetMetrics = new DatasetMetrics(registry, () => retained.stats());
  const loader = new SnapshotLoader({
    // The threads get a new generation before the budget tells them to release the old one.
    observer: pool === null ? retained : bothObservers(pool, retained),
    source: opts.source,
    registry,
    builder,
    clock,
    timers,
    log,
    refreshIntervalMs: opts.refreshIntervalMs ?? 60_000,
    startupTimeoutMs: opts.startupTimeoutMs ?? 60_000,
    cache: opts.cacheDir ? new SnapshotCache(opts.cacheDir) : null,
    checks: datasetMetrics,
    catalogEtag: initial.etag,
    catalogKnown: initial.known,
    ...(opts.backoffBaseMs === undefined ? {} : { backoffBaseMs: opts.backoffBaseMs }),
    ...(opts.backoffMaxMs === undefined ? {} : { backoffMaxMs: opts.backoffMaxMs }),
  });
  const access = opts.accessLog ?? null;
  // One thread serving: its metrics live here; else each serving thread keeps its own.
  const serving =
    pool === null
      ? new ServingMetrics(
          registry.slots.map((s) => s.id),
          '0',
        )
      : null;
  const loadingMetrics = datasetMetrics.registry();
  const metricsText = async (): Promise<string> => {
    const threads: MetricsSnapshot[] = pool !== null ? await pool.metricsSnapshots() : [await serving!.snapshot()];
    return prometheusText([await loadingMetrics.getMetricsAsJSON(), ...threads]);
  };
  const admin = createAdminOps(registry, loader, metricsText, retained);
  const limiter = new RateLimiter(keys, clock);
  const responseCacheBytes = opts.responseCacheBytes ?? 0;
  const rowCacheBytes = opts.rowCacheBytes ?? 0;
  const rowArena = rowCacheBytes > 0 ? allocateRowArena(rowCacheBytes, opts.rowCacheAdmission ?? DEFAULT_ROW_ADMISSION, opts.pageCacheBytes ?? 0) : null;
  // One failed-authentication table for every serving thread: the limit holds per address whatever --workers is.
  const authFailLimit = opts.authFailLimit ?? OFF;
  const authFailures = authFailureMemory(authFailLimit);
  const joinInlineBytes = opts.joinInlineBytes ?? DEFAULT_JOIN_INLINE_BYTES;
  let server: Listener;
  if (pool !== null) {
    const port = await pool.start(
      workers,
      {
        host: opts.host,
        port: opts.port,
        keys: opts.keys,
        limiter: limiter.state,
        clock: clock.shared,
        accessLog: access !== null,
        logLevel: opts.logLevel ?? null,
        responseCacheBytes,
        rowArena,
        datasets: selection.text,
        catalog: catalogDocument(registry.catalog),
        authFailLimit,
        authFailures,
        trustedProxies: (opts.trustedProxies ?? TrustedProxies.none).text,
        joinInlineBytes,
      },
      admin,
      retained,
    );
    server = { port, stopListening: () => pool.stopListening(), idle: () => pool.idle(), close: () => pool.close() };
  } else {
    server = await serveThread(
      {
        registry,
        keys,
        limiter,
        clock,
        log,
        admin,
        responseCacheBytes,
        rowArena,
        metrics: serving!,
        authFailLimit,
        authFailures,
        trustedProxies: opts.trustedProxies ?? TrustedProxies.none,
        supply: retained,
        accessLog: access,
        host: opts.host,
        port: opts.port,
        joinInlineBytes,
      },
      opts.transport ?? listen,
    );
  }
  log.info('listening', { host: opts.host, port: server.port, source: opts.source.description, datasets: selection.text });
  let metricsServer: UwsServer | null = null;
  if (opts.metricsPort !== undefined && opts.metricsPort !== null) {
    const ids = new RequestIds();
    try {
      metricsServer = await listenMetrics(opts.host, opts.metricsPort, metricsText, () => ids.next());
    } catch (e) {
      await server.close();
      await builder.close();
      throw e;
    }
    log.info('metrics listening', { host: opts.host, port: metricsServer.port });
  }
  await loader.start();
  log.info('ready', { datasets: registry.slots.filter((s) => s.state === 'loaded').length, of: registry.slots.length });
  return {
    port: server.port,
    metricsPort: metricsServer?.port ?? null,
    registry,
    loader,
    metrics: metricsText,
    drain: () => {
      registry.markDraining();
      pool?.drain();
    },
    stopListening: async () => {
      metricsServer?.stopListening();
      await server.stopListening?.();
    },
    idle: async () => {
      await Promise.all([server.idle?.(), metricsServer?.idle()]);
    },
    replaceKeys: (cfg) => {
      const next = new KeyRegistry(cfg);
      const buckets = limiter.stateFor(keys, next);
      keys.replace(next);
      limiter.replace(keys, buckets);
      pool?.replaceKeys(cfg, buckets);
    },
    close: async () => {
      loader.stop();
      retained.stop();
      reaper.stop();
      metricsServer?.close();
      await server.close();
      await builder.close();
      serving?.close();
      access?.flush();
    },
  };
}
