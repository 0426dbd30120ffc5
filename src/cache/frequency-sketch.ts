/**
 * How often a key was asked for lately, approximately: TinyLFU's count-min sketch
 * (Einziger, Friedman, Manes, "TinyLFU: A Highly Efficient Cache Admission Policy"; as
 * Caffeine keeps it). The response cache asks it, when full, whether a new answer was
 * asked for more often than the answer it would evict (response-cache.ts).
 *
 * Storage is one Uint8Array sized once: `width` counters, four per key at positions from
 * one 32-bit hash (double hashing). An estimate is the least of the four, so a collision
 * can only raise a key's count, never lower it; an increment raises only the counters at
 * that least (conservative update), which keeps collisions from inflating the others.
 * Counters stop at 15. After `width x 5/8` increments every counter is halved, so counts
 * describe recent traffic, not all of it: a query that was hot yesterday cannot hold its
 * entry against today's. That ratio is Caffeine's (16 counters and 10 increments between
 * halvings per entry the cache holds): about 2.5 increments per counter, so the counters
 * of a sketch with room for the keys it sees rarely reach 15.
 */
export class FrequencySketch {
  private readonly counts: Uint8Array;
  private readonly mask: number;
  private readonly sampleSize: number;
  private additions = 0;

  /** `width` counters, rounded up to a power of two within [1024, 2^22]. */
  constructor(width: number) {
    let n = 1024;
    while (n < width && n < 1 << 22) n *= 2;
    this.counts = new Uint8Array(n);
    this.mask = n - 1;
    this.sampleSize = (n * 5) >>> 3;
  }

  /** The least of the key's four counters (0-15). */
  estimate(hash: number): number {
    const c = this.counts;
    const m = this.mask;
    const step = FrequencySketch.step(hash);
    let least = c[hash & m]!;
    for (let i = 1, at = hash; i < 4; i++) {
      at = (at + step) | 0;
      const v = c[at & m]!;
      if (v < least) least = v;
    }
    return least;
  }

  /** Counts one more ask for the key; answers its count before this ask (its estimate). */
  increment(hash: number): number {
    const least = this.estimate(hash);
    if (least >= 15) return least;
    const c = this.counts;
    const m = this.mask;
    const step = FrequencySketch.step(hash);
    for (let i = 0, at = hash; i < 4; i++, at = (at + step) | 0) if (c[at & m] === least) c[at & m] = least + 1;
    if (++this.additions >= this.sampleSize) this.halve();
    return least;
  }

  /** Counters in the table. */
  get width(): number {
    return this.counts.length;
  }

  /** Increments since the last halving (for tests of the aging). */
  get sampled(): number {
    return this.additions;
  }

  private halve(): void {
    const c = this.counts;
    for (let i = 0; i < c.length; i++) c[i] = c[i]! >>> 1;
    this.additions = this.additions >>> 1;
  }

  /** An odd step, so four positions never coincide in a power-of-two table. */
  private static step(hash: number): number {
    return (Math.imul(hash, 0x9e3779b1) >>> 15) | 1;
  }
}
