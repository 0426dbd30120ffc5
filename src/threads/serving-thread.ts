import { createApiHandler } from '../api/api-handler.js';
import type { AdminOps } from '../api/admin.js';
import { RequestIds } from '../api/request-ids.js';
import { AuthThrottle } from '../auth/auth-throttle.js';
import type { AuthFailureMemory } from '../auth/failure-table.js';
import type { KeyRegistry } from '../auth/key-registry.js';
import type { RateLimiter } from '../auth/rate-limiter.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { GenerationSupply } from '../generations/generation-supply.js';
import type { ListenOptions } from '../http/uws-server.js';
import type { Handler } from '../http/types.js';
import type { AccessLog } from '../log/access-log.js';
import type { Logger } from '../log/logger.js';
import type { RowArenaMemory } from '../format/arenas/row-arena.js';
import type { Clock } from '../time/clock.js';
import type { ServeOptions } from '../config/serve-options.js';
import type { ServingMetrics } from './serving-metrics.js';

/** Everything one serving thread answers requests with: the same whether it is the only one (start.ts) or one of a pool (serving-worker.ts). */
export interface ServingThread {
  // what it answers from
  readonly registry: DatasetRegistry;
  readonly supply: GenerationSupply;
  readonly rowArena: RowArenaMemory | null;
  // who may ask
  readonly keys: KeyRegistry;
  readonly limiter: RateLimiter;
  /** the one failed-authentication table every serving thread counts in */
  readonly authFailures: AuthFailureMemory;
  // how it runs
  readonly clock: Clock;
  readonly log: Logger;
  readonly admin: AdminOps;
  /** the server's options, whole */
  readonly options: ServeOptions;
  /** options.port, or the one the pool picked for port 0 */
  readonly port: number;
  // what it reports
  readonly metrics: ServingMetrics;
  readonly accessLog: AccessLog | null;
}

/** A serving thread's API handler, its metrics attached to it, listening through `transport` (uWS's listen, or a test's in-process one): the one set-up of a serving thread. */
export async function serveThread<L extends { close(): void | Promise<void> }>(
  t: ServingThread,
  transport: (handler: Handler, opts: ListenOptions) => Promise<L>,
): Promise<L> {
  const access = t.accessLog;
  const handler = createApiHandler({
    registry: t.registry,
    keys: t.keys,
    limiter: t.limiter,
    clock: t.clock,
    ids: new RequestIds(),
    log: t.log,
    admin: t.admin,
    options: t.options,
    rowArena: t.rowArena,
    metrics: t.metrics.requests,
    authThrottle: new AuthThrottle(t.options.authFailLimit, t.authFailures),
    supply: t.supply,
    ...(access === null ? {} : { access: (r) => access.write(r) }),
  });
  t.metrics.attach(handler);
  const listener = await transport(handler, {
    host: t.options.host,
    port: t.port,
    onError: (err, requestId) => t.log.error('transport fault', { record_id: requestId, error: String(err) }),
  });
  // Closing the listener also stops the handler's join worker.
  return {
    ...listener,
    close: async () => {
      await listener.close();
      await handler.close();
    },
  };
}
