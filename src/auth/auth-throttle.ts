import { parseDuration } from '../time/duration.js';
import { ADDRESS_KEY_WORDS, addressKey } from './address-key.js';
import { FailureTable, allocateAuthFailures, type AuthFailureMemory } from './failure-table.js';

/** `--auth-fail-limit`: at most `count` failed authentications per client address in `windowMs`; count 0 = no throttle. */
export interface AuthFailLimit {
  readonly count: number;
  readonly windowMs: number;
}

/** Addresses tracked at once (a power of two: the table's size): a flood from many addresses evicts the oldest instead of growing it. */
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

/** The table for `limit`, made once at start: DEFAULT_TRACKED_ADDRESSES slots, or one when nothing is throttled. */
export function authFailureMemory(limit: AuthFailLimit): AuthFailureMemory {
  return allocateAuthFailures(limit.count === 0 ? 1 : DEFAULT_TRACKED_ADDRESSES);
}

/**
 * Failed authentications per client address (docs/decisions.md#auth-throttle): after `count` failures
 * in a window, the address gets 429 until the window ends, for every request, checked
 * before its key is hashed, so a guesser costs a table lookup, not a sha256. One table for
 * every serving thread (failure-table.ts, on shared memory), so the limit holds per address
 * whatever `--workers` is. Other addresses are not slowed: the check is one probe of that
 * table, and only while some address has failed recently (`active`); a request with a good
 * key writes nothing. The table holds a fixed number of addresses; a new one past that
 * evicts the oldest, so a flood of addresses cannot grow memory.
 */
export class AuthThrottle {
  private readonly table: FailureTable;
  /** the address being looked up or counted, as the table keys it (address-key.ts) */
  private readonly key = new Int32Array(ADDRESS_KEY_WORDS);

  /** `memory`: the table every serving thread shares (allocateAuthFailures); absent = one of its own. */
  constructor(
    readonly limit: AuthFailLimit,
    memory: AuthFailureMemory = authFailureMemory(limit),
  ) {
    this.table = new FailureTable(memory, limit.windowMs);
  }

  /** false while no address failed within a window (on any thread): requests need not look up their address. */
  get active(): boolean {
    return this.table.live > 0;
  }

  get tracked(): number {
    return this.table.live;
  }

  /** Seconds until `address` may authenticate again; 0 when it may now. */
  retryAfterSeconds(address: string, nowMs: number): number {
    this.table.prune(nowMs);
    addressKey(address, this.key);
    const failures = this.table.failures(this.key, nowMs);
    if (failures === 0 || failures < this.limit.count) return 0;
    return Math.max(1, Math.ceil((this.table.start + this.limit.windowMs - nowMs) / 1000));
  }

  /** `address` sent a missing or wrong key. */
  failed(address: string, nowMs: number): void {
    if (this.limit.count === 0) return;
    addressKey(address, this.key);
    this.table.record(this.key, nowMs);
  }
}
