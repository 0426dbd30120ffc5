import type { Clock } from '../src/time/clock.js';

/**
 * Timers the S3 source uses: the stall watchdog and the retry backoff. Injected so a test
 * (or a simulation) can drive them; the default is the real clock.
 */
export interface Timers extends Clock {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemTimers: Timers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export function sleep(timers: Timers, ms: number): Promise<void> {
  return new Promise((done) => void timers.setTimeout(done, ms));
}

/**
 * Fires `onStall` once when no progress was reported for `stallMs`. Progress is a
 * timestamp, not a re-armed timer: a body arrives in thousands of chunks and re-arming a
 * timer per chunk would cost more than reading it.
 */
export class StallWatchdog {
  private last: number;
  private handle: unknown = null;
  private done = false;
  private fired = false;

  constructor(
    private readonly stallMs: number,
    private readonly onStall: () => void,
    private readonly timers: Timers = systemTimers,
  ) {
    this.last = timers.now();
    this.arm(stallMs);
  }

  /** True once the watchdog has fired. */
  get stalled(): boolean {
    return this.fired;
  }

  /** Some bytes arrived. */
  readonly touch = (): void => {
    this.last = this.timers.now();
  };

  stop(): void {
    this.done = true;
    if (this.handle !== null) this.timers.clearTimeout(this.handle);
    this.handle = null;
  }

  private arm(ms: number): void {
    this.handle = this.timers.setTimeout(() => this.check(), Math.max(1, ms));
  }

  private check(): void {
    this.handle = null;
    if (this.done) return;
    const idle = this.timers.now() - this.last;
    if (idle < this.stallMs) {
      this.arm(this.stallMs - idle);
      return;
    }
    this.fired = true;
    this.done = true;
    this.onStall();
  }
}
