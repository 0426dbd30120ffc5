/**
 * Time is injected: the server, the rate limiter and the metadata read the clock through
 * this, so tests fix it and nothing depends on the wall clock.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch (may be fractional). */
  now(): number;
}

export const systemClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
};

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private ms: number) {}
  now(): number {
    return this.ms;
  }
  set(ms: number): void {
    this.ms = ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
