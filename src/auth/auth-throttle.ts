import { parseDuration } from '../time/duration.js';

/** `--auth-fail-limit`: at most `count` failed authentications per client address in `windowMs`; count 0 = no throttle. */
export interface AuthFailLimit {
  readonly count: number;
  readonly windowMs: number;
}

export const DEFAULT_AUTH_FAIL_LIMIT: AuthFailLimit = { count: 30, windowMs: 60_000 };

/** Addresses tracked at once: a flood from many addresses evicts the oldest instead of growing the table. */
export const DEFAULT_TRACKED_ADDRESSES = 65_536;

/** `30/60s`, `100/5m`, or `0` (off). Throws with a message naming the flag. */
export function parseAuthFailLimit(text: string): AuthFailLimit {
  if (text === '0') return { count: 0, windowMs: 60_000 };
  const m = /^(\d{1,9})\/(.+)$/.exec(text);
  const windowMs = m === null ? NaN : parseDuration(m[2]!, '--auth-fail-limit');
  if (m === null || !(Number(m[1]) > 0) || !(windowMs >= 1000)) {
    throw new Error(`--auth-fail-limit: "${text}" is not <failures>/<window> with a window of at least 1s (e.g. 30/60s, 100/5m), or 0 for no limit`);
  }
  return { count: Number(m[1]), windowMs };
}

interface Entry {
  windowStart: number;
  failures: number;
}

/**
 * Failed authentications per client address (issue 14; OWASP API2): after `count` failures
 * in a window, the address gets 429 until the window ends, for every request, checked
 * before its key is hashed, so a guesser costs a table lookup, not a sha256. Other
 * addresses are not slowed: the check is one Map lookup, and only while some address has
 * failed recently (`active`). The table holds at most `capacity` addresses; a new one past
 * that evicts the oldest, so a flood of addresses cannot grow memory. One table per
 * serving thread: with `--workers N` an address may fail up to N x count times before
 * every thread refuses it.
 */
export class AuthThrottle {
  private readonly entries = new Map<string, Entry>();
  private nextPrune = 0;

  constructor(
    readonly limit: AuthFailLimit,
    private readonly capacity = DEFAULT_TRACKED_ADDRESSES,
  ) {}

  /** false while no address failed within a window: requests need not look up their address. */
  get active(): boolean {
    return this.entries.size > 0;
  }

  get tracked(): number {
    return this.entries.size;
  }

  /** Seconds until `address` may authenticate again; 0 when it may now. */
  retryAfterSeconds(address: string, nowMs: number): number {
    this.prune(nowMs);
    const e = this.entries.get(address);
    if (e === undefined) return 0;
    const end = e.windowStart + this.limit.windowMs;
    if (nowMs >= end) {
      this.entries.delete(address);
      return 0;
    }
    return e.failures >= this.limit.count ? Math.max(1, Math.ceil((end - nowMs) / 1000)) : 0;
  }

  /** `address` sent a missing or wrong key. */
  failed(address: string, nowMs: number): void {
    if (this.limit.count === 0) return;
    const e = this.entries.get(address);
    if (e !== undefined && nowMs < e.windowStart + this.limit.windowMs) {
      e.failures++;
      return;
    }
    if (e !== undefined) this.entries.delete(address);
    else if (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(address, { windowStart: nowMs, failures: 1 });
  }

  /** Drops addresses whose window ended, at most once a window (so `active` turns false again). */
  private prune(nowMs: number): void {
    if (nowMs < this.nextPrune) return;
    this.nextPrune = nowMs + this.limit.windowMs;
    for (const [address, e] of this.entries) if (nowMs >= e.windowStart + this.limit.windowMs) this.entries.delete(address);
  }
}
