import { describe, expect, it } from 'vitest';
import { KeyRegistry } from '../src/auth/key-registry.js';
import { parseKeysFile } from '../src/auth/keys-file.js';
import type { RateDecision } from '../src/auth/rate-limiter.js';
import { RateLimiter, rateLimitHeaders } from '../src/auth/rate-limiter.js';
import { ManualClock } from '../src/time/clock.js';

const T0 = Date.UTC(2026, 3, 1);

// Index 0: 2/s burst 5; index 1: unlimited; index 2: one request every 4 s, burst 1.
const config = parseKeysFile(
  JSON.stringify({
    keys: [
      { id: 'limited', key: 'k-limited', products: '*', rate_limit: { per_second: 2, burst: 5 } },
      { id: 'free', key: 'k-free', products: '*' },
      { id: 'slow', key: 'k-slow', products: '*', rate_limit: { per_second: 0.25, burst: 1 } },
    ],
  }),
  'test',
);

function setup(): { clock: ManualClock; limiter: RateLimiter } {
  const clock = new ManualClock(T0);
  return { clock, limiter: new RateLimiter(config, clock) };
}

/** Copies the reused decision object so several can be compared. */
function take(limiter: RateLimiter, i: number): RateDecision {
  return { ...limiter.take(i) };
}

describe('RateLimiter token bucket', () => {
  it('allows a full burst, then denies with Retry-After until one token is back', () => {
    const { limiter } = setup();
    const burst = Array.from({ length: 5 }, () => take(limiter, 0));
    expect(burst.map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(burst.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    const denied = take(limiter, 0);
    // 2 tokens/s: one token in 0.5 s, rounded up to whole seconds.
    expect(denied).toEqual({ allowed: false, limited: true, limit: 5, remaining: 0, resetSeconds: 3, retryAfterSeconds: 1 });
  });

  it('rounds Retry-After up to the seconds one token takes at a slow rate', () => {
    const { clock, limiter } = setup();
    expect(take(limiter, 2).allowed).toBe(true);
    expect(take(limiter, 2)).toMatchObject({ allowed: false, retryAfterSeconds: 4, resetSeconds: 4 });
    clock.advance(2500);
    expect(take(limiter, 2)).toMatchObject({ allowed: false, retryAfterSeconds: 2, resetSeconds: 2 });
    clock.advance(1500);
    expect(take(limiter, 2)).toMatchObject({ allowed: true, remaining: 0, resetSeconds: 4 });
  });

  it('refills continuously with clock time and a denied request costs nothing', () => {
    const { clock, limiter } = setup();
    for (let i = 0; i < 5; i++) limiter.take(0);
    expect(take(limiter, 0).allowed).toBe(false);
    clock.advance(499);
    expect(take(limiter, 0).allowed).toBe(false);
    clock.advance(1);
    expect(take(limiter, 0)).toMatchObject({ allowed: true, remaining: 0 });
    clock.advance(1250); // 2.5 tokens
    expect(take(limiter, 0)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 2 });
  });

  it('never fills above burst however long the key is idle', () => {
    const { clock, limiter } = setup();
    limiter.take(0);
    clock.advance(3_600_000);
    const d = take(limiter, 0);
    expect(d).toMatchObject({ allowed: true, remaining: 4, limit: 5 });
    const allowed = Array.from({ length: 10 }, () => limiter.take(0).allowed).filter(Boolean).length;
    expect(allowed).toBe(4);
  });

  it('reports Reset as whole seconds until the bucket is full again', () => {
    const { clock, limiter } = setup();
    expect(take(limiter, 0)).toMatchObject({ remaining: 4, resetSeconds: 1 }); // 1 missing at 2/s: 0.5 s
    limiter.take(0);
    expect(take(limiter, 0)).toMatchObject({ remaining: 2, resetSeconds: 2 }); // 3 missing: 1.5 s
    limiter.take(0);
    limiter.take(0);
    expect(take(limiter, 0)).toMatchObject({ allowed: false, remaining: 0, resetSeconds: 3 }); // 5 missing: 2.5 s
    clock.advance(2500);
    expect(take(limiter, 0)).toMatchObject({ remaining: 4, resetSeconds: 1 });
  });

  it('refills nothing when the clock steps back, and counts no time twice after', () => {
    const { clock, limiter } = setup();
    for (let i = 0; i < 5; i++) limiter.take(0);
    clock.advance(-10_000);
    expect(take(limiter, 0).allowed).toBe(false);
    clock.advance(10_000);
    expect(take(limiter, 0).allowed).toBe(false);
    clock.advance(500);
    expect(take(limiter, 0)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('keeps buckets of different keys independent', () => {
    const { limiter } = setup();
    for (let i = 0; i < 5; i++) limiter.take(0);
    expect(take(limiter, 0).allowed).toBe(false);
    expect(take(limiter, 2).allowed).toBe(true);
  });

  it('never denies an unlimited key and gives it no headers', () => {
    const { limiter } = setup();
    for (let i = 0; i < 10_000; i++) {
      const d = limiter.take(1);
      if (!d.allowed) throw new Error(`denied at request ${i}`);
    }
    const d = limiter.take(1);
    expect(d.limited).toBe(false);
    expect(rateLimitHeaders(d)).toEqual([]);
  });

  it('allows everything when no key has a limit', () => {
    const cfg = parseKeysFile(JSON.stringify({ keys: [{ id: 'a', key: 'ka', products: '*' }] }), 'test');
    const limiter = new RateLimiter(new KeyRegistry(cfg), new ManualClock(T0));
    expect(Array.from({ length: 100 }, () => limiter.take(0).allowed).every(Boolean)).toBe(true);
  });

  it('builds the same buckets from a registry as from the config', () => {
    const clock = new ManualClock(T0);
    const limiter = new RateLimiter(new KeyRegistry(config), clock);
    const allowed = Array.from({ length: 8 }, () => limiter.take(0).allowed);
    expect(allowed).toEqual([true, true, true, true, true, false, false, false]);
  });

  it('shares buckets with a second limiter attached to the same state', () => {
    const { clock, limiter } = setup();
    const other = new RateLimiter(config, clock, limiter.state);
    expect(limiter.state.tokens.buffer).toBeInstanceOf(SharedArrayBuffer);
    for (let i = 0; i < 3; i++) limiter.take(0);
    expect(take(other, 0).remaining).toBe(1);
    expect(() => new RateLimiter(parseKeysFile(JSON.stringify({ keys: [{ id: 'a', key: 'ka', products: '*' }] }), 't'), clock, limiter.state)).toThrow(
      /for 3 keys, not 1/,
    );
  });
});

describe('rateLimitHeaders', () => {
  it('sends Limit, Remaining and Reset for an allowed request of a limited key', () => {
    const { limiter } = setup();
    expect(rateLimitHeaders(limiter.take(0))).toEqual([
      ['RateLimit-Limit', '5'],
      ['RateLimit-Remaining', '4'],
      ['RateLimit-Reset', '1'],
    ]);
  });

  it('adds Retry-After when the request is denied', () => {
    const { limiter } = setup();
    limiter.take(2);
    expect(rateLimitHeaders(limiter.take(2))).toEqual([
      ['RateLimit-Limit', '1'],
      ['RateLimit-Remaining', '0'],
      ['RateLimit-Reset', '4'],
      ['Retry-After', '4'],
    ]);
  });
});

describe('a reloaded keys file (KeyRegistry.replace, RateLimiter.stateFor and replace)', () => {
  const reloaded = parseKeysFile(
    JSON.stringify({
      keys: [
        { id: 'new', key: 'k-new', products: '*', rate_limit: { per_second: 1, burst: 3 } },
        { id: 'limited', key: 'k-limited', products: '*', rate_limit: { per_second: 2, burst: 5 } },
        { id: 'slow', key: 'k-slow', products: '*', rate_limit: { per_second: 1, burst: 2 } },
      ],
    }),
    'reloaded',
  );

  it('keeps the buckets of keys whose id and limit stay, starts new and changed keys full, and moves indices', () => {
    const clock = new ManualClock(T0);
    const keys = new KeyRegistry(config);
    const limiter = new RateLimiter(keys, clock);
    for (let i = 0; i < 5; i++) limiter.take(0); // 'limited' spent
    limiter.take(2); // 'slow' spent
    expect(take(limiter, 0).allowed).toBe(false);
    expect(keys.authenticate('k-free')).toBe(1); // cached: the reload must not keep this answer

    const next = new KeyRegistry(reloaded);
    const state = limiter.stateFor(keys, next);
    keys.replace(next);
    limiter.replace(keys, state);

    expect(keys.size).toBe(3);
    expect(keys.authenticate('k-free')).toBe(-1);
    expect(keys.authenticate('k-limited')).toBe(1);
    expect(keys.id(keys.authenticate('k-new'))).toBe('new');
    // 'limited' kept its (empty) bucket: a reload is no way to refill a budget.
    expect(take(limiter, 1)).toMatchObject({ allowed: false, limit: 5 });
    // 'slow' changed its limit: a fresh bucket of the new burst.
    expect(take(limiter, 2)).toMatchObject({ allowed: true, limit: 2, remaining: 1 });
    expect(take(limiter, 0)).toMatchObject({ allowed: true, limit: 3, remaining: 2 });
    clock.advance(500);
    expect(take(limiter, 1)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it('a limiter on another thread attached to the new buckets shares them', () => {
    const clock = new ManualClock(T0);
    const keys = new KeyRegistry(config);
    const a = new RateLimiter(keys, clock);
    const b = new RateLimiter(new KeyRegistry(config), clock, a.state);
    const next = new KeyRegistry(reloaded);
    const state = a.stateFor(keys, next);
    keys.replace(next);
    a.replace(keys, state);
    b.replace(next, state);
    for (let i = 0; i < 3; i++) expect(a.take(0).allowed).toBe(true);
    expect(b.take(0).allowed).toBe(false);
  });

  it('an unlimited key set after a limited one pays nothing per request', () => {
    const clock = new ManualClock(T0);
    const keys = new KeyRegistry(config);
    const limiter = new RateLimiter(keys, clock);
    const free = new KeyRegistry(parseKeysFile(JSON.stringify({ keys: [{ id: 'free', key: 'k-free', products: '*' }] }), 'free'));
    limiter.replace(free, limiter.stateFor(keys, free));
    expect(take(limiter, 0)).toMatchObject({ allowed: true, limited: false });
  });
});
