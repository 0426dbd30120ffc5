/** Why a value left a SlotLru: pushed out to stay within the bound, or replaced under its slot. */
export type LeaveReason = 'evict' | 'set';

/**
 * A byte-bounded LRU of values filed under int32 slots, for the response cache. lru-cache
 * did this before; per request it cost an options object or a status read in `get`, and a
 * generator for a look at its least-recently-used entry (about 120 bytes of garbage per
 * request: docs/decisions.md#allocation). Here the order is two Int32Arrays of links and the sizes a
 * Float64Array, grown by doubling and otherwise allocated once: `get`, `set`, `peekOldest`
 * and `pop` allocate nothing once the arrays hold the entries (the Map of slots only when
 * a slot is new).
 *
 * Entries are indices into the arrays; freed ones are reused first. `leave` hears of every
 * value that goes (evicted or replaced), never of one still held.
 */
export class SlotLru<V> {
  private readonly index = new Map<number, number>();
  private slots: Int32Array;
  private sizes: Float64Array;
  /** towards the older entry; -1 at the oldest */
  private older: Int32Array;
  /** towards the newer entry; -1 at the newest */
  private newer: Int32Array;
  private values: (V | undefined)[];
  /** free entries, a stack */
  private free: Int32Array;
  private freeCount = 0;
  /** entries ever used (indices below it are in use or free) */
  private used = 0;
  private newest = -1;
  private oldest = -1;
  private total = 0;

  constructor(
    /** the bound on the sum of sizes */
    private readonly maxSize: number,
    private readonly sizeOf: (v: V) => number,
    private readonly leave: (v: V, slot: number, reason: LeaveReason) => void,
    capacity = 64,
  ) {
    this.slots = new Int32Array(capacity);
    this.sizes = new Float64Array(capacity);
    this.older = new Int32Array(capacity);
    this.newer = new Int32Array(capacity);
    this.values = new Array<V | undefined>(capacity).fill(undefined);
    this.free = new Int32Array(capacity);
  }

  /** Entries held. */
  get size(): number {
    return this.index.size;
  }

  /** Entries the arrays have room for: grows only when more are held at once than ever before. */
  get capacity(): number {
    return this.slots.length;
  }

  /** The sum of the held values' sizes. */
  get calculatedSize(): number {
    return this.total;
  }

  /** The value under `slot`, now the most recently used; undefined when none. */
  get(slot: number): V | undefined {
    const e = this.index.get(slot);
    if (e === undefined) return undefined;
    this.touch(e);
    return this.values[e];
  }

  /** The least recently used value, left where it is; undefined when empty. */
  peekOldest(): V | undefined {
    return this.oldest < 0 ? undefined : this.values[this.oldest];
  }

  /**
   * Files `value` under `slot` as the most recently used, replacing what was there (told to
   * `leave` as 'set'), after evicting the least recently used values until it fits. A value
   * larger than the bound alone is not kept (and nothing is evicted for it).
   */
  set(slot: number, value: V): void {
    const size = this.sizeOf(value);
    if (size > this.maxSize) return;
    const held = this.index.get(slot);
    if (held !== undefined) {
      const old = this.values[held]!;
      this.unlink(held);
      this.total -= this.sizes[held]!;
      this.index.delete(slot);
      this.release(held);
      if (old !== value) this.leave(old, slot, 'set');
    }
    while (this.total + size > this.maxSize && this.oldest >= 0) this.pop();
    const e = this.take();
    this.slots[e] = slot;
    this.sizes[e] = size;
    this.values[e] = value;
    this.total += size;
    this.index.set(slot, e);
    this.linkNewest(e);
  }

  /** Evicts the least recently used value (told to `leave` as 'evict') and returns it; undefined when empty. */
  pop(): V | undefined {
    const e = this.oldest;
    if (e < 0) return undefined;
    const value = this.values[e]!;
    const slot = this.slots[e]!;
    this.unlink(e);
    this.total -= this.sizes[e]!;
    this.index.delete(slot);
    this.release(e);
    this.leave(value, slot, 'evict');
    return value;
  }

  /** Slots from the most to the least recently used (tests, diagnostics). */
  slotsByRecency(): number[] {
    const out: number[] = [];
    for (let e = this.newest; e >= 0; e = this.older[e]!) out.push(this.slots[e]!);
    return out;
  }

  private touch(e: number): void {
    if (e === this.newest) return;
    this.unlink(e);
    this.linkNewest(e);
  }

  private linkNewest(e: number): void {
    this.older[e] = this.newest;
    this.newer[e] = -1;
    if (this.newest >= 0) this.newer[this.newest] = e;
    this.newest = e;
    if (this.oldest < 0) this.oldest = e;
  }

  private unlink(e: number): void {
    const o = this.older[e]!;
    const n = this.newer[e]!;
    if (o >= 0) this.newer[o] = n;
    else this.oldest = n;
    if (n >= 0) this.older[n] = o;
    else this.newest = o;
  }

  private release(e: number): void {
    this.values[e] = undefined;
    this.free[this.freeCount++] = e;
  }

  private take(): number {
    if (this.freeCount > 0) return this.free[--this.freeCount]!;
    if (this.used === this.slots.length) this.grow();
    return this.used++;
  }

  private grow(): void {
    const n = this.slots.length * 2;
    const widen = <T extends Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(n);
      b.set(a);
      return b;
    };
    this.slots = widen(this.slots, (k) => new Int32Array(k));
    this.sizes = widen(this.sizes, (k) => new Float64Array(k));
    this.older = widen(this.older, (k) => new Int32Array(k));
    this.newer = widen(this.newer, (k) => new Int32Array(k));
    this.free = widen(this.free, (k) => new Int32Array(k));
    const values = new Array<V | undefined>(n).fill(undefined);
    for (let i = 0; i < this.values.length; i++) values[i] = this.values[i];
    this.values = values;
  }
}
