import { describe, expect, it } from 'vitest';
import { SlotLru, type LeaveReason } from '../src/cache/slot-lru.js';

interface Value {
  readonly id: number;
  readonly size: number;
}

/** The definition SlotLru implements, as plainly as it can be written: a list from newest to oldest. */
class ReferenceLru {
  order: { slot: number; value: Value }[] = [];
  left: [number, number, LeaveReason][] = [];
  constructor(private readonly maxSize: number) {}
  total(): number {
    return this.order.reduce((a, e) => a + e.value.size, 0);
  }
  get(slot: number): Value | undefined {
    const i = this.order.findIndex((e) => e.slot === slot);
    if (i < 0) return undefined;
    const [e] = this.order.splice(i, 1);
    this.order.unshift(e!);
    return e!.value;
  }
  set(slot: number, value: Value): void {
    if (value.size > this.maxSize) return;
    const i = this.order.findIndex((e) => e.slot === slot);
    if (i >= 0) {
      const [old] = this.order.splice(i, 1);
      if (old!.value !== value) this.left.push([old!.value.id, slot, 'set']);
    }
    while (this.total() + value.size > this.maxSize && this.order.length > 0) this.pop();
    this.order.unshift({ slot, value });
  }
  pop(): Value | undefined {
    const e = this.order.pop();
    if (e !== undefined) this.left.push([e.value.id, e.slot, 'evict']);
    return e?.value;
  }
}

function pair(maxSize: number, capacity: number) {
  const left: [number, number, LeaveReason][] = [];
  const lru = new SlotLru<Value>(
    maxSize,
    (v) => v.size,
    (v, slot, reason) => left.push([v.id, slot, reason]),
    capacity,
  );
  return { lru, left, ref: new ReferenceLru(maxSize) };
}

/** xorshift32: a repeatable sequence. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

describe('SlotLru (the response cache order)', () => {
  it('does what the plain list does, over long random sequences of get, set and pop, through growth and reuse of entries', () => {
    for (const seed of [1, 7, 99, 12345]) {
      const rnd = random(seed);
      const { lru, left, ref } = pair(1000, 2);
      let id = 0;
      const values = new Map<number, Value>();
      for (let step = 0; step < 4000; step++) {
        const op = rnd();
        // Negative and large slots too: slots are int32 hashes.
        const slot = (Math.floor(rnd() * 40) * 0x1000_0001 - 0x7fff_0000) | 0;
        if (op < 0.45) {
          expect(lru.get(slot), `step ${step}`).toBe(ref.get(slot));
        } else if (op < 0.9) {
          // Sometimes the very value already held (no leave), sometimes one larger than the bound.
          const held = values.get(slot);
          const value = held !== undefined && rnd() < 0.1 ? held : { id: id++, size: rnd() < 0.02 ? 1001 : 1 + Math.floor(rnd() * 300) };
          if (value.size <= 1000) values.set(slot, value);
          lru.set(slot, value);
          ref.set(slot, value);
        } else {
          expect(lru.pop(), `step ${step}`).toBe(ref.pop());
        }
        expect(lru.slotsByRecency(), `step ${step}`).toEqual(ref.order.map((e) => e.slot));
        expect(lru.size).toBe(ref.order.length);
        expect(lru.calculatedSize).toBe(ref.total());
        expect(lru.peekOldest()).toBe(ref.order.at(-1)?.value);
      }
      expect(left).toEqual(ref.left);
      expect(left.some(([, , r]) => r === 'set')).toBe(true);
      expect(left.some(([, , r]) => r === 'evict')).toBe(true);
    }
  });

  it('evicts the least recently used first, a get counting as a use', () => {
    const { lru, left } = pair(30, 4);
    const v = (id: number): Value => ({ id, size: 10 });
    lru.set(1, v(1));
    lru.set(2, v(2));
    lru.set(3, v(3));
    expect(lru.peekOldest()?.id).toBe(1);
    lru.get(1);
    expect(lru.peekOldest()?.id).toBe(2);
    lru.set(4, v(4));
    expect(left).toEqual([[2, 2, 'evict']]);
    expect(lru.slotsByRecency()).toEqual([4, 1, 3]);
    expect(lru.get(2)).toBeUndefined();
  });

  it('keeps nothing larger than its bound, and evicts nothing for it', () => {
    const { lru, left } = pair(30, 4);
    lru.set(1, { id: 1, size: 30 });
    lru.set(2, { id: 2, size: 31 });
    expect(lru.get(2)).toBeUndefined();
    expect(lru.get(1)?.id).toBe(1);
    expect(left).toEqual([]);
  });

  it('reuses the entries values left: its arrays grow only when more values are held at once than they have room for', () => {
    const { lru } = pair(1000, 4);
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 4; i++) lru.set(round * 10 + i, { id: i, size: 1 });
      // replacing and evicting free entries as well
      lru.set(round * 10, { id: 99, size: 1 });
      for (let i = 0; i < 4; i++) lru.pop();
    }
    expect(lru.capacity).toBe(4);
    for (let i = 0; i < 5; i++) lru.set(i, { id: i, size: 1 });
    expect(lru.capacity).toBe(8);
    expect(lru.slotsByRecency()).toEqual([4, 3, 2, 1, 0]);
  });

  it('is empty after popping everything, and pop then answers undefined', () => {
    const { lru } = pair(100, 1);
    for (let i = 0; i < 5; i++) lru.set(i, { id: i, size: 1 });
    for (let i = 0; i < 5; i++) expect(lru.pop()?.id).toBe(i);
    expect(lru.pop()).toBeUndefined();
    expect(lru.peekOldest()).toBeUndefined();
    expect([lru.size, lru.calculatedSize]).toEqual([0, 0]);
    lru.set(9, { id: 9, size: 1 });
    expect(lru.slotsByRecency()).toEqual([9]);
  });
});
