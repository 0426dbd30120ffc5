/**
 * Timers are injected, next to the clock, so that everything that waits (refresh polling,
 * start-up retries, S3 backoff and stall watchdog, access-log flushes) is driven by tests
 * instead of the wall clock. Time itself is read from a `Clock`, never from here.
 */
export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/**
 * The real timers. Unref'd: a pending refresh, flush or backoff never keeps the process
 * alive on its own; whoever owns the work stops it on shutdown.
 */
export const realTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * The real timers, kept referenced: for waits that are the process's own work, such as
 * the S3 source's retry backoff during a one-shot `pitcache asof` (an unref'd sleep there
 * would let the process exit before the retry).
 */
export const activeTimers: Timers = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Resolves after `ms` on the given timers. */
export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((resolve) => void timers.setTimeout(resolve, ms));
}
