import { systemClock, type Clock } from '../time/clock.js';
import { activeTimers, type Timers } from '../time/timers.js';

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
    private readonly timers: Timers = activeTimers,
    private readonly clock: Clock = systemClock,
  ) {
    this.last = clock.now();
    this.arm(stallMs);
  }

  /** True once the watchdog has fired. */
  get stalled(): boolean {
    return this.fired;
  }

  /** Some bytes arrived. */
  readonly touch = (): void => {
    this.last = this.clock.now();
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
    const idle = this.clock.now() - this.last;
    if (idle < this.stallMs) {
      this.arm(this.stallMs - idle);
      return;
    }
    this.fired = true;
    this.done = true;
    this.onStall();
  }
}
