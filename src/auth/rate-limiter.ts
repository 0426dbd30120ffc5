import type { Clock } from '../time/clock.js';
import { allocF64, allocI32 } from '../store/shared-memory.js';
import type { KeysConfig, RateLimit } from './keys-file.js';
import { KeyRegistry } from './key-registry.js';

export interface RateDecision {
  allowed: boolean;
  /** False for an unlimited key: then no rate-limit headers are sent. */
  limited: boolean;
  /** The bucket size (burst). */
  limit: number;
  /** Whole tokens left after this request. */
  remaining: number;
  /** Seconds until the bucket is full again; 0 when it is. */
  resetSeconds: number;
  /** Seconds until one token is available, >= 1 when not allowed; 0 when allowed. */
  retryAfterSeconds: number;
}

/** Bucket state, on SharedArrayBuffer so that worker threads can attach to the same buckets. */
export interface RateLimiterState {
  /** Tokens per key index. */
  readonly tokens: Float64Array;
  /** Clock time (ms) of the last refill per key index. */
  readonly refilledAt: Float64Array;
  /** One spin lock per key index (0 free, 1 held): serving threads share buckets. */
  readonly locks: Int32Array;
}

const UNLIMITED: Readonly<RateDecision> = Object.freeze({
  allowed: true,
  limited: false,
  limit: 0,
  remaining: 0,
  resetSeconds: 0,
  retryAfterSeconds: 0,
});

// Float noise from continuous refill must not turn "full" into "1 s to full".
const EPS = 1e-9;

/**
 * Token buckets per key index: a bucket starts full (burst), refills continuously at
 * per_second up to burst, and each allowed request takes one token. A denied request takes
 * nothing, so a client that respects Retry-After gets through on its retry.
 *
 * `take` returns one decision object that the next `take` overwrites: read it (or build the
 * headers) before taking again. Unlimited keys get a shared frozen decision.
 *
 * Thread sharing: `state` can be handed to another limiter over the same config (one per
 * serving thread). Each bucket's read-modify-write runs under a per-key spin lock: the
 * critical section is a few arithmetic operations, so a lock is cheaper than a round trip
 * to a coordinating thread, and a key's limit holds across threads.
 */
export class RateLimiter {
  private _state: RateLimiterState;
  /** 0 = unlimited; bucket parameters are per index so the hot path reads arrays only. */
  private perMs: Float64Array;
  private burst: Float64Array;
  private readonly decision: RateDecision = { ...UNLIMITED, limited: true };

  /**
   * Replaced by an always-allow function when no key has a limit, so a deployment without
   * rate limits pays nothing per request.
   */
  take: (keyIndex: number) => Readonly<RateDecision>;

  constructor(
    keys: KeysConfig | KeyRegistry,
    private readonly clock: Clock,
    shared?: RateLimiterState,
  ) {
    const limits: Array<RateLimit | null> = keys instanceof KeyRegistry ? limitsOf(keys) : keys.keys.map((k) => k.rateLimit);
    this.perMs = new Float64Array(0);
    this.burst = new Float64Array(0);
    this._state = { tokens: new Float64Array(0), refilledAt: new Float64Array(0), locks: new Int32Array(0) };
    this.take = () => UNLIMITED;
    this.configure(limits, shared);
  }

  /** The buckets, on shared memory: hand them to the limiter of another serving thread. */
  get state(): RateLimiterState {
    return this._state;
  }

  /**
   * The buckets for a reloaded key set `next`, while `current` is still in force: a key whose
   * id and limit stay keeps its tokens (a reload is no way to refill one's budget); a new or
   * changed key starts full.
   */
  stateFor(current: KeyRegistry, next: KeyRegistry): RateLimiterState {
    const n = next.size;
    const s: RateLimiterState = { tokens: allocF64(n), refilledAt: allocF64(n), locks: allocI32(n) };
    const now = this.clock.now();
    for (let i = 0; i < n; i++) {
      const rl = next.rateLimit(i);
      if (rl === null) continue;
      const j = current.indexOfId(next.id(i));
      const kept = j >= 0 && this.burst[j] === rl.burst && this.perMs[j] === rl.perSecond / 1000;
      s.tokens[i] = kept ? this._state.tokens[j]! : rl.burst;
      s.refilledAt[i] = kept ? this._state.refilledAt[j]! : now;
    }
    return s;
  }

  /** Limits by the keys now in `keys` (after KeyRegistry.replace), on the buckets stateFor made. */
  replace(keys: KeyRegistry, state: RateLimiterState): void {
    this.configure(limitsOf(keys), state);
  }

  private configure(limits: ReadonlyArray<RateLimit | null>, shared: RateLimiterState | undefined): void {
    const n = limits.length;
    if (shared !== undefined && (shared.tokens.length !== n || shared.refilledAt.length !== n || shared.locks.length !== n)) {
      throw new Error(`shared rate-limit state is for ${shared.tokens.length} keys, not ${n}`);
    }
    const perMs = new Float64Array(n);
    const burst = new Float64Array(n);
    const state = shared ?? { tokens: allocF64(n), refilledAt: allocF64(n), locks: allocI32(n) };
    const now = this.clock.now();
    limits.forEach((rl, i) => {
      if (rl === null) return;
      perMs[i] = rl.perSecond / 1000;
      burst[i] = rl.burst;
      if (shared === undefined) {
        state.tokens[i] = rl.burst;
        state.refilledAt[i] = now;
      }
    });
    this.perMs = perMs;
    this.burst = burst;
    this._state = state;
    this.take = limits.some((rl) => rl !== null) ? (i) => this.takeLimited(i) : () => UNLIMITED;
  }

  private takeLimited(i: number): Readonly<RateDecision> {
    const perMs = this.perMs[i]!;
    if (!(perMs > 0)) return UNLIMITED;
    const burst = this.burst[i]!;
    const { tokens: tokensArr, refilledAt, locks } = this._state;
    while (Atomics.compareExchange(locks, i, 0, 1) !== 0);
    const now = this.clock.now();
    let tokens = tokensArr[i]!;
    const last = refilledAt[i]!;
    // A clock that steps back refills nothing and keeps the later mark, so no time counts twice.
    if (now > last) {
      tokens = Math.min(burst, tokens + (now - last) * perMs);
      refilledAt[i] = now;
    }
    const d = this.decision;
    if (tokens >= 1 - EPS) {
      tokens = Math.max(0, tokens - 1);
      d.allowed = true;
      d.retryAfterSeconds = 0;
    } else {
      d.allowed = false;
      d.retryAfterSeconds = Math.max(1, ceilSeconds((1 - tokens) / perMs / 1000));
    }
    tokensArr[i] = tokens;
    Atomics.store(locks, i, 0);
    d.limit = burst;
    d.remaining = Math.floor(tokens + EPS);
    d.resetSeconds = ceilSeconds((burst - tokens) / perMs / 1000);
    return d;
  }
}

function limitsOf(keys: KeyRegistry): Array<RateLimit | null> {
  return Array.from({ length: keys.size }, (_, i) => keys.rateLimit(i));
}

function ceilSeconds(s: number): number {
  return s <= EPS ? 0 : Math.ceil(s - EPS);
}

/**
 * Calls `set` for each rate-limit header of a decision (none for an unlimited key):
 * `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset`, and `Retry-After` when denied.
 * Lets the HTTP layer write headers without an intermediate array.
 */
export function forEachRateLimitHeader(d: Readonly<RateDecision>, set: (name: string, value: string) => void): void {
  if (!d.limited) return;
  set('RateLimit-Limit', String(d.limit));
  set('RateLimit-Remaining', String(d.remaining));
  set('RateLimit-Reset', String(d.resetSeconds));
  if (!d.allowed) set('Retry-After', String(d.retryAfterSeconds));
}

export function rateLimitHeaders(d: Readonly<RateDecision>): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  forEachRateLimitHeader(d, (name, value) => out.push([name, value]));
  return out;
}
