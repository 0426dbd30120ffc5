import { fnv1a } from '../query/hash.js';

/**
 * Admission for the response cache: a body is kept only when its key was asked for before,
 * among about the last `slots` distinct keys (TinyLFU's doorkeeper). A farm that re-runs the
 * same backtests fills the cache from the second request of each query on; a stream of
 * queries that never come back within that window (a sweep wider than the cache) no longer
 * copies every body into the cache only to evict it unread, which cost a body-sized
 * allocation and its garbage collection per request.
 *
 * Storage is one Int32Array sized once. A key hash sits in one of two slots (an empty one
 * if there is one, else each in turn), so two keys colliding on one slot can both be
 * remembered.
 */
export class Doorkeeper {
  private readonly seen: Int32Array;
  private readonly mask: number;
  private turn = 0;

  constructor(slots: number) {
    let n = 1024;
    while (n < slots && n < 1 << 22) n *= 2;
    this.seen = new Int32Array(n);
    this.mask = n - 1;
  }

  /** True when `key` was offered recently; otherwise remembers it and answers false. */
  admit(key: string): boolean {
    const h = fnv1a(key) | 1; // never 0, the empty slot
    const a = h & this.mask;
    const b = (Math.imul(h, 0x9e3779b1) >>> 12) & this.mask;
    const seen = this.seen;
    if (seen[a] === h || seen[b] === h) return true;
    if (seen[a] === 0) seen[a] = h;
    else if (seen[b] === 0) seen[b] = h;
    else {
      this.turn ^= 1;
      seen[this.turn === 0 ? a : b] = h;
    }
    return false;
  }
}
