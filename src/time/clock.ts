/**
 * Time is injected: the server, the rate limiter and the metadata read the clock through
 * this, so tests fix it and nothing depends on the wall clock.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (may be fractional). */
  now(): number;
  /**
   * Set by clocks that serving threads must share: a Float64Array cell holding the time
   * (see ManualClock). Threads rebuild the clock with `clockFromShared`.
   */
  readonly shared?: Float64Array;
}

export const systemClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
};

/** A clock that only moves when told to. Its time lives in shared memory, so threads see one time. */
export class ManualClock implements Clock {
  readonly shared: Float64Array;
  constructor(ms: number) {
    this.shared = new Float64Array(new SharedArrayBuffer(8));
    this.shared[0] = ms;
  }
  now(): number {
    return this.shared[0]!;
  }
  set(ms: number): void {
    this.shared[0] = ms;
  }
  advance(ms: number): void {
    this.shared[0] = this.shared[0]! + ms;
  }
}

/** The clock of another thread: its shared cell if it has one, else the system clock. */
export function clockFromShared(shared: Float64Array | undefined): Clock {
  return shared === undefined ? systemClock : { now: () => shared[0]!, shared };
}
