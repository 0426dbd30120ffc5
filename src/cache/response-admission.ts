import type { RequestKey } from './request-key.js';
import { FrequencySketch } from './frequency-sketch.js';

/** A candidate asked for this often lately is warm: past the counts a cyclic sweep's keys hover at (Caffeine's threshold). */
const WARM = 6;

/**
 * Which answers the response cache keeps: TinyLFU's admission, with one FrequencySketch
 * counting every ask (hits and misses).
 *
 * A head is considered from its query's second ask lately: queries asked once are rarely
 * copied in (only when all four of a key's counters collide with others'). While the
 * cache has room, that is all: a farm re-running a set of backtests that fits fills it
 * from the second round on. Once full, a head is kept only if its query was asked for
 * more often lately than the least-recently-used entry it would evict first, or if it
 * is a newer generation's answer of that entry's dataset. A cyclic sweep wider than the cache
 * (walk-forward loops over many series) then leaves the entries it has alone and hits
 * about capacity / working set of the time, where plain LRU admission hit almost never
 * and copied, then evicted unread, one body per admitted miss: garbage that lived just
 * long enough to be promoted, the p99's GC pauses (docs/decisions.md#allocation).
 *
 * The sketch replaced a doorkeeper (two hashed slots per key, overwritten in turn): that
 * forgot a few percent of a small working set for good (keys whose slots others kept
 * taking back), so those were never cached at all.
 */
export class ResponseAdmission {
  private readonly frequency: FrequencySketch;
  /** xorshift32 state for beats(); any non-zero seed */
  private draws = 0x2545f491;

  /** For a cache of maxBytes. */
  constructor(maxBytes: number) {
    // About 16 counters per answer of a typical size (33 KB) the cache can hold, as Caffeine
    // sizes its sketch; it halves after about 10 such answers' worth of asks.
    this.frequency = new FrequencySketch(Math.ceil(maxBytes / 2048));
  }

  /** Counts one more ask of the key filed under `hash`; answers how often it was asked for lately before this one (0: a first ask, not to be kept). */
  asked(hash: number): number {
    return this.frequency.increment(hash);
  }

  /** Whether the answer of `key` (its slot was just counted by `asked`) takes the place of `victim`, the entry a full cache would evict first. */
  replaces(key: RequestKey, victim: { readonly key: RequestKey }): boolean {
    return supersedes(key, victim.key) || this.beats(this.frequency.estimate(key.slot), this.frequency.estimate(victim.key.slot));
  }

  /**
   * Whether a candidate asked for `candidate` times lately takes the place of an entry asked
   * for `victim` times.
   *
   * By 2 or more, not 1: keys asked for equally often can read 1 apart, when the sketch
   * halved between their asks (a key counted just before a halving loses half its count,
   * one counted just after does not). Admitting on a lead of 1 let a cyclic sweep evict an
   * entry just before its turn came round, after every halving.
   *
   * A warm candidate that does not win is still let in one time in 128 (Caffeine's rule):
   * the victim's four counters can all be shared with keys being asked for (a count-min
   * sketch only ever reads high), and then it would read as hot as they are for good and
   * keep every one of them out. Draws come from a fixed-seed xorshift, so a run is
   * repeatable.
   */
  private beats(candidate: number, victim: number): boolean {
    if (candidate >= victim + 2) return true;
    if (candidate < WARM) return false;
    let x = this.draws;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.draws = x;
    return (x & 127) === 0;
  }
}

/**
 * An answer of a newer generation of the victim's dataset: the victim is then never asked
 * for again but by a cursor, however often it was asked for before the refresh. Without
 * this, a farm's hot answers would keep their places for several halvings after a
 * refresh, and the new generation's answers would be rendered afresh all that time.
 */
function supersedes(key: RequestKey, victim: RequestKey): boolean {
  return victim.dataset === key.dataset && victim.generation < key.generation;
}
