import { allocI32 } from '../store/shared-memory.js';
import { ADDRESS_KEY_WORDS } from './address-key.js';

/**
 * Int32 words per slot: one 64-byte cache line, so threads writing neighbouring slots do
 * not contend for a line. The slot's words: its version (odd while written), the address
 * key, the failures of its window (0 = empty slot), the window's start in ms as two words
 * (an Int32Array takes Atomics; a Float64Array does not), and its stamp (eviction age).
 */
const SLOT_WORDS = 16;
const SEQ = 0;
const KEY = 1;
const FAILURES = KEY + ADDRESS_KEY_WORDS;
const START_HI = FAILURES + 1;
const STAMP = START_HI + 2;

/** The header's words, one line before the slots: the writers' lock, live slots, the next stamp, the next prune's time. */
const HEADER_WORDS = 16;
const LOCK = 0;
const LIVE = 1;
const NEXT_STAMP = 2;
const PRUNE_HI = 3;

/** Slots an address may sit in, from its hash on: a lookup reads at most these. */
const PROBES = 8;
const TWO_32 = 0x1_0000_0000;

/** The table's memory, on a SharedArrayBuffer: made once at start and handed to every serving thread. */
export interface AuthFailureMemory {
  readonly words: Int32Array;
}

/** A table of `capacity` addresses, rounded up to a power of two. Its size is fixed: it never grows. */
export function allocateAuthFailures(capacity: number): AuthFailureMemory {
  let slots = 1;
  while (slots < capacity) slots *= 2;
  return { words: allocI32(HEADER_WORDS + slots * SLOT_WORDS) };
}

/**
 * Failed authentications per address, shared by every serving thread (docs/keys.md#throttle):
 * an open-addressed hash table of fixed size on shared memory. Writers (a failure, a
 * prune) take one spin lock: their critical section is a probe of at most eight slots,
 * and only failing clients write. Readers take no lock: each slot is a seqlock (its
 * version is odd while a writer is inside), so a lookup reads a slot's words and re-reads
 * its version, and retries the slot when it moved. A new address takes the first empty
 * slot of its range; in a full range it evicts the slot whose window began first (an
 * ended one if any), so a flood of addresses replaces old entries instead of growing the
 * table.
 */
export class FailureTable {
  private readonly words: Int32Array;
  private readonly mask: number;
  private readonly probes: number;
  /** the window start of the last `failures` that found one (its caller reads it next) */
  start = 0;
  /** this thread's copy of the next prune's time, so most lookups do not read the shared one */
  private nextPrune = 0;

  constructor(
    memory: AuthFailureMemory,
    private readonly windowMs: number,
  ) {
    this.words = memory.words;
    const slots = (memory.words.length - HEADER_WORDS) / SLOT_WORDS;
    this.mask = slots - 1;
    this.probes = Math.min(PROBES, slots);
  }

  get capacity(): number {
    return this.mask + 1;
  }

  /** Slots holding an address (some may have ended their window and await the next prune). */
  get live(): number {
    return Atomics.load(this.words, LIVE);
  }

  /** The failures of `key`'s window if it is open at `nowMs` (its start in `start`), else 0. */
  failures(key: Int32Array, nowMs: number): number {
    const w = this.words;
    const home = homeSlot(key);
    for (let p = 0; p < this.probes; p++) {
      const at = HEADER_WORDS + ((home + p) & this.mask) * SLOT_WORDS;
      for (;;) {
        const seq = Atomics.load(w, at + SEQ);
        // A writer is inside for a few stores: read the slot again.
        if ((seq & 1) !== 0) continue;
        const failures = Atomics.load(w, at + FAILURES);
        const same = failures > 0 && sameKey(w, at, key);
        const start = same ? startOf(w, at) : 0;
        if (Atomics.load(w, at + SEQ) !== seq) continue;
        if (!same) break;
        if (nowMs >= start + this.windowMs) return 0;
        this.start = start;
        return failures;
      }
    }
    return 0;
  }

  /** One more failure for `key`: counted in its open window, else a new window starts at `nowMs`. */
  record(key: Int32Array, nowMs: number): void {
    const w = this.words;
    lock(w);
    const home = homeSlot(key);
    let empty = -1;
    let oldest = -1;
    for (let p = 0; p < this.probes; p++) {
      const at = HEADER_WORDS + ((home + p) & this.mask) * SLOT_WORDS;
      const failures = w[at + FAILURES]!;
      if (failures === 0) {
        if (empty < 0) empty = at;
        continue;
      }
      if (sameKey(w, at, key)) {
        if (nowMs < startOf(w, at) + this.windowMs) write(w, at, failures + 1, null, 0);
        else this.begin(at, key, nowMs);
        unlock(w);
        return;
      }
      // Stamps follow window starts, so the oldest is a slot whose window ended when there is one.
      if (oldest < 0 || w[at + STAMP]! - w[oldest + STAMP]! < 0) oldest = at;
    }
    if (empty >= 0) Atomics.add(w, LIVE, 1);
    this.begin(empty >= 0 ? empty : oldest, key, nowMs);
    unlock(w);
  }

  /**
   * Empties the slots whose window ended, at most once a window for all threads (so `live`
   * falls to 0 again and requests stop looking their address up). A thread that finds the
   * lock taken leaves it to the holder.
   */
  prune(nowMs: number): void {
    if (nowMs < this.nextPrune) return;
    const w = this.words;
    const due = timeAt(w, PRUNE_HI);
    if (nowMs < due) {
      this.nextPrune = due;
      return;
    }
    if (Atomics.compareExchange(w, LOCK, 0, 1) !== 0) return;
    this.nextPrune = nowMs + this.windowMs;
    setTime(w, PRUNE_HI, this.nextPrune);
    for (let at = HEADER_WORDS; at < w.length; at += SLOT_WORDS) {
      if (w[at + FAILURES] !== 0 && nowMs >= startOf(w, at) + this.windowMs) {
        write(w, at, 0, null, 0);
        Atomics.sub(w, LIVE, 1);
      }
    }
    unlock(w);
  }

  private begin(at: number, key: Int32Array, nowMs: number): void {
    const w = this.words;
    const stamp = w[NEXT_STAMP]!;
    w[NEXT_STAMP] = (stamp + 1) | 0;
    write(w, at, 1, key, nowMs, stamp);
  }
}

/** A slot's words under its version: odd while written, the next even once done. Only the lock holder writes. */
function write(w: Int32Array, at: number, failures: number, key: Int32Array | null, startMs: number, stamp = 0): void {
  const seq = w[at + SEQ]!;
  Atomics.store(w, at + SEQ, seq + 1);
  Atomics.store(w, at + FAILURES, failures);
  if (key !== null) {
    for (let i = 0; i < ADDRESS_KEY_WORDS; i++) Atomics.store(w, at + KEY + i, key[i]!);
    setTime(w, at + START_HI, startMs);
    Atomics.store(w, at + STAMP, stamp);
  }
  Atomics.store(w, at + SEQ, (seq + 2) | 0);
}

function startOf(w: Int32Array, at: number): number {
  return timeAt(w, at + START_HI);
}

/** A time in ms (whole, >= 0) as two words from `i`: its high bits, then its low 32. */
function timeAt(w: Int32Array, i: number): number {
  return Atomics.load(w, i) * TWO_32 + (Atomics.load(w, i + 1) >>> 0);
}

function setTime(w: Int32Array, i: number, ms: number): void {
  const whole = Math.floor(ms);
  Atomics.store(w, i, Math.floor(whole / TWO_32));
  Atomics.store(w, i + 1, whole | 0);
}

function sameKey(w: Int32Array, at: number, key: Int32Array): boolean {
  for (let i = 0; i < ADDRESS_KEY_WORDS; i++) if (Atomics.load(w, at + KEY + i) !== key[i]) return false;
  return true;
}

/** The key's first slot (unmasked): its words mixed, so addresses of one subnet spread. Exported for tests that make addresses collide. */
export function homeSlot(key: Int32Array): number {
  let h = 0x2545_f491;
  for (let i = 0; i < ADDRESS_KEY_WORDS; i++) {
    h = Math.imul(h ^ key[i]!, 0x9e37_79b1);
    h ^= h >>> 15;
  }
  return h >>> 0;
}

function lock(w: Int32Array): void {
  while (Atomics.compareExchange(w, LOCK, 0, 1) !== 0);
}

function unlock(w: Int32Array): void {
  Atomics.store(w, LOCK, 0);
}
