import type { SnapshotSource } from '../source/snapshot-source.js';
import { KeyRegistry } from '../auth/key-registry.js';
import type { KeysConfig } from '../auth/keys-file.js';
import { RateLimiter } from '../auth/rate-limiter.js';
import { DatasetSelection } from '../catalog/dataset-selection.js';
import { catalogDocument } from '../catalog/catalog-document.js';
import { readCatalogAtStart, type CatalogAtStart } from '../generations/catalog-at-start.js';
import type { Handler } from '../http/types.js';
import { listen, type ListenOptions, type UwsServer } from '../http/uws-server.js';
import { AccessLog } from '../log/access-log.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { prometheusText, type MetricsSnapshot } from '../metrics/aggregate.js';
import { DatasetMetrics } from '../generations/dataset-metrics.js';
import { GenerationMemory } from '../generations/generation-memory.js';
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
import { RetentionBudget } from '../generations/retention-budget.js';
import { bothObservers } from '../generations/slot-observer.js';
import { ServingMetrics } from './serving-metrics.js';
import { serveThread } from './serving-thread.js';
import { authFailureMemory } from '../auth/auth-throttle.js';
import { resolveServeOptions, type ServeOptions } from '../config/serve-options.js';
import { ServingPool } from './serving-pool.js';
import { SnapshotCache } from '../generations/snapshot-cache.js';
import { SnapshotLoader } from '../generations/snapshot-loader.js';
import { WorkerTableBuilder, inlineBuilder, type TableBuilder } from '../generations/table-builder.js';
import { realTimers, type Timers } from '../time/timers.js';

/**
 * What a server is started with besides its options: where its data and keys come from,
 * and what tests inject (time, a logger, an in-process transport, how tables are built).
 */
export interface StartDeps {
  readonly source: SnapshotSource;
  readonly keys: KeysConfig;
  readonly clock?: Clock;
  readonly timers?: Timers;
  /** this thread's log; default silent (serving threads log to stderr at `logLevel`) */
  readonly log?: Logger;
  /** where this thread's access log goes when `accessLog` is on; default a new one on stderr */
  readonly accessLogTo?: AccessLog;
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** 'worker' (default): snapshots are decoded and indexed off the serving thread */
  readonly build?: 'worker' | 'inline';
  /** when a rendered row is kept (row-doorkeeper.ts); default DEFAULT_ROW_ADMISSION (on its second render) */
  readonly rowCacheAdmission?: RowAdmission;
  /** the catalog in force at the source, read by the caller (`pitcache serve` exits 2 without one); absent = read here */
  readonly catalog?: CatalogAtStart;
  /**
   * Serves the API handler (one serving thread); default: uWS on host:port. Tests pass one
   * that keeps the handler and calls it in process (test/support/harness.ts), so the
   * contract suite runs the real wiring without a socket.
   */
  readonly transport?: Transport;
}

/**
 * The dependencies and any of the serve options (serve-options.ts): those given are checked
 * by the options' table, the others take its defaults (those of `pitcache serve`).
 */
export type StartOptions = StartDeps & Partial<ServeOptions>;

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
  /** The loading thread's reaper (docs/snapshots.md#release): shared bytes it was told were dropped, and those not collected yet. */
  reaped(): { readonly droppedBytes: number; readonly unreclaimedBytes: number };
  close(): Promise<void>;
}

/**
 * Listens at once (so /healthz answers and /readyz says 503 while loading), loads every
 * named dataset, then resolves. Data requests before that answer 503 not_ready.
 */
export async function startServer(opts: StartOptions): Promise<RunningServer> {
  // Checked once here; from now on the one frozen object is handed whole to every component and thread.
  const options = resolveServeOptions(opts);
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger;
  const selection = DatasetSelection.parse(options.datasets);
  const initial = opts.catalog ?? (await readCatalogAtStart(opts.source, log));
  const registry = new DatasetRegistry(selection, initial.catalog);
  const unmatched = selection.unmatched(initial.catalog);
  if (unmatched.length > 0) log.warn('--datasets patterns match no dataset of the catalog yet', { patterns: unmatched });
  const keys = new KeyRegistry(opts.keys);
  const builder: TableBuilder = opts.build === 'inline' ? inlineBuilder : new WorkerTableBuilder();
  // Serving threads (if any) mirror every check: the pool observes the loader.
  const pool = options.workers > 1 ? new ServingPool(log, registry) : null;
  const timers = opts.timers ?? realTimers;
  // What this thread releases is collected here at once (each serving thread has its own).
  // On real timers: when V8 collects is the machine's business, not the server's clock's.
  const reaper = new GenerationReaper(realTimers);
  // Superseded generations under one budget; those it released (or never held) load again from history/.
  const retained = new RetainedGenerations(
    {
      registry,
      budget: new RetentionBudget(options.retainMemory, options.cursorIdleMs),
      history: new GenerationHistory({ source: opts.source, clock, builder }),
      clock,
      timers,
      log,
      reaper,
      // each serving thread builds its own bulk indexes (one thread when there is no pool)
      memory: new GenerationMemory(pool === null ? 1 : options.workers),
      ...(pool === null ? {} : { listener: pool }),
    },
    options.cursorIdleMs,
  );
  const datasetMetrics = new DatasetMetrics(
    registry,
    () => retained.stats(),
    (g) => retained.bytesOf(g),
  );
  const loader = new SnapshotLoader({
    // The threads get a new generation before the budget tells them to release the old one.
    observer: pool === null ? retained : bothObservers(pool, retained),
    source: opts.source,
    registry,
    builder,
    clock,
    timers,
    log,
    refreshIntervalMs: options.refreshIntervalMs,
    startupTimeoutMs: options.startupTimeoutMs,
    cache: options.cacheDir === null ? null : new SnapshotCache(options.cacheDir),
    checks: datasetMetrics,
    catalogEtag: initial.etag,
    catalogKnown: initial.known,
    ...(opts.backoffBaseMs === undefined ? {} : { backoffBaseMs: opts.backoffBaseMs }),
    ...(opts.backoffMaxMs === undefined ? {} : { backoffMaxMs: opts.backoffMaxMs }),
  });
  // This thread's access log (serving threads of a pool make their own).
  const access = options.accessLog && pool === null ? (opts.accessLogTo ?? new AccessLog({ clock })) : null;
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
  // One row arena and one failed-authentication table for every serving thread (shared memory):
  // the row cache is one, and the limit holds per address whatever --workers is.
  const rowArena =
    options.rowCacheBytes > 0 ? allocateRowArena(options.rowCacheBytes, opts.rowCacheAdmission ?? DEFAULT_ROW_ADMISSION, options.pageCacheBytes) : null;
  const authFailures = authFailureMemory(options.authFailLimit);
  let server: Listener;
  if (pool !== null) {
    const port = await pool.start(
      {
        options,
        keys: opts.keys,
        limiter: limiter.state,
        clock: clock.shared,
        rowArena,
        catalog: catalogDocument(registry.catalog),
        authFailures,
      },
      admin,
      retained,
    );
    server = { port, stopListening: () => pool.stopListening(), idle: () => pool.idle(), close: () => pool.close() };
  } else {
    server = await serveThread(
      {
        registry,
        supply: retained,
        rowArena,
        keys,
        limiter,
        authFailures,
        clock,
        log,
        admin,
        options,
        port: options.port,
        metrics: serving!,
        accessLog: access,
      },
      opts.transport ?? listen,
    );
  }
  log.info('listening', { host: options.host, port: server.port, source: opts.source.description, datasets: selection.text });
  let metricsServer: UwsServer | null = null;
  if (options.metricsPort !== null) {
    const ids = new RequestIds();
    try {
      metricsServer = await listenMetrics(options.host, options.metricsPort, metricsText, () => ids.next());
    } catch (e) {
      await server.close();
      await builder.close();
      throw e;
    }
    log.info('metrics listening', { host: options.host, port: metricsServer.port });
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
    reaped: () => ({ droppedBytes: reaper.droppedBytes, unreclaimedBytes: reaper.unreclaimedBytes }),
    close: async () => {
      loader.stop();
      retained.stop();
      reaper.stop();
      metricsServer?.close();
      await server.close();
      await builder.close();
      serving?.close();
      // Its own is closed; a given one stays its giver's (flushed).
      if (access !== null && access !== opts.accessLogTo) access.close();
      else access?.flush();
    },
  };
}
