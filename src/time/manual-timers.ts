import type { ManualClock } from './clock.js';
import type { Timers } from './timers.js';

interface Pending {
  readonly due: number;
  readonly seq: number;
  readonly fn: () => void;
}

/**
 * Timers that fire only when told to, on a ManualClock (the pair tests use instead of the
 * wall clock). Firing a timer first moves the clock to its due time, so code that reads the
 * clock in its callback sees the time it asked for. Timers due at the same time fire in the
 * order they were set, as real ones do.
 */
export class ManualTimers implements Timers {
  /** every delay asked for, in order */
  readonly requested: number[] = [];
  private seq = 0;
  private readonly pending = new Map<number, Pending>();
  private waiters: Array<() => void> = [];

  constructor(readonly clock: ManualClock) {}

  setTimeout(callback: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.requested.push(ms);
    this.pending.set(id, { due: this.clock.now() + Math.max(0, ms), seq: id, fn: callback });
    for (const w of this.waiters.splice(0)) w();
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }

  /** How many timers are pending. */
  get size(): number {
    return this.pending.size;
  }

  /** Due time of the earliest pending timer, or null. */
  nextDue(): number | null {
    return this.earliest()?.[1].due ?? null;
  }

  /** Moves the clock to the earliest timer and fires it; throws when none is pending. */
  fire(): void {
    const next = this.earliest();
    if (next === null) throw new Error('no timer to fire');
    this.run(next[0], next[1]);
  }

  /** Moves the clock forward by `ms`, firing every timer that falls due on the way, in order. */
  advance(ms: number): void {
    const end = this.clock.now() + ms;
    for (let next = this.earliest(); next !== null && next[1].due <= end; next = this.earliest()) this.run(next[0], next[1]);
    this.clock.set(end);
  }

  /**
   * Resolves once a timer is pending. The real-time bound only keeps a broken test from
   * hanging: a generation build that arms the next check can take seconds on a loaded 2-core
   * box (5 s failed there), so it is well above that and below the 30 s test timeout.
   */
  async armed(what = 'a timer', realMs = 20_000): Promise<void> {
    if (this.pending.size > 0) return;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((done) => this.waiters.push(done)),
      new Promise<never>((_, fail) => {
        timeout = setTimeout(() => fail(new Error(`waited ${realMs} ms for ${what}; none was set`)), realMs);
      }),
    ]).finally(() => clearTimeout(timeout));
  }

  private run(id: number, t: Pending): void {
    this.pending.delete(id);
    if (t.due > this.clock.now()) this.clock.set(t.due);
    t.fn();
  }

  private earliest(): [number, Pending] | null {
    let best: [number, Pending] | null = null;
    for (const e of this.pending) if (best === null || e[1].due < best[1].due || (e[1].due === best[1].due && e[1].seq < best[1].seq)) best = e;
    return best;
  }
}
