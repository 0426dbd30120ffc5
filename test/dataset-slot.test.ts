/**
 * The slot's transitions, the only way its state changes (the loader decides when, the slot
 * what changes). Generations here are bare values: the slot only stores and hands them out.
 */
import { describe, expect, it } from 'vitest';
import { findProduct } from '../src/catalog/products.js';
import { DatasetRegistry } from '../src/generations/dataset-registry.js';
import { DatasetSlot } from '../src/generations/dataset-slot.js';
import type { Generation } from '../src/generations/generation.js';

const gen = (number: number): Generation => ({ number, table: { byteSize: 10 } }) as unknown as Generation;
const slot = (): DatasetSlot => new DatasetSlot(findProduct('pemi')!, 'grid_stress');

describe('DatasetSlot transitions', () => {
  it('starts pending; a failure before any load sets the state, after one only the reason', () => {
    const s = slot();
    expect(s.status()).toEqual({ state: 'pending', lastError: null, lastCheckMs: null });
    s.fail('unreachable', 'down');
    expect(s.status()).toEqual({ state: 'unreachable', lastError: 'down', lastCheckMs: null });
    s.swap(gen(1));
    expect(s.status()).toEqual({ state: 'loaded', lastError: null, lastCheckMs: null });
    s.fail('refused', 'bad checksum');
    expect(s.state).toBe('loaded');
    expect(s.current?.number).toBe(1);
    expect(s.lastError).toBe('bad checksum');
    s.recovered();
    expect(s.lastError).toBeNull();
  });

  it('checked records the time of the check; serveCached serves and keeps the reason', () => {
    const s = slot();
    s.checked(1234);
    expect(s.lastCheckMs).toBe(1234);
    s.serveCached(gen(7), 'serving the local cache');
    expect(s.status()).toEqual({ state: 'loaded', lastError: 'serving the local cache', lastCheckMs: 1234 });
    expect(s.current?.number).toBe(7);
  });

  it('a swap keeps the previous generation for cursors; mirror copies another thread’s view', () => {
    const s = slot();
    s.swap(gen(1));
    s.swap(gen(2));
    expect(s.find(1)?.number).toBe(1);
    expect(s.retainedNumbers()).toEqual([1]);
    const other = slot();
    other.mirror(s.status());
    expect(other.status()).toEqual(s.status());
    other.mirror({ state: 'missing', lastError: 'no manifest', lastCheckMs: 5 });
    expect(other.status()).toEqual({ state: 'missing', lastError: 'no manifest', lastCheckMs: 5 });
  });
});

describe('DatasetSlot: adopted and released generations (contract 12)', () => {
  it('adopt keeps a generation loaded from history beside the current one, release drops it, the current one is never dropped', () => {
    const s = slot();
    s.swap(gen(5));
    s.adopt(gen(2));
    expect(s.find(2)?.number).toBe(2);
    expect(s.retainedNumbers()).toEqual([2]);
    // Adopting one already held keeps the object held (caches are keyed by it).
    const held = s.find(2);
    s.adopt(gen(2));
    expect(s.find(2)).toBe(held);
    // The current one is not adopted as retained, and release never touches it.
    s.adopt(gen(5));
    expect(s.retainedNumbers()).toEqual([2]);
    s.release(5);
    expect(s.current?.number).toBe(5);
    s.release(2);
    expect(s.find(2)).toBeNull();
    expect(s.retainedNumbers()).toEqual([]);
  });

  it('a swap to a generation held as retained makes it current and no longer retained', () => {
    const s = slot();
    s.swap(gen(1));
    s.adopt(gen(3));
    s.swap(gen(3));
    expect(s.current?.number).toBe(3);
    expect(s.retainedNumbers()).toEqual([1]);
  });
});

describe('DatasetRegistry', () => {
  it('is not ready until start-up marks it; finds slots by name', () => {
    const r = new DatasetRegistry();
    expect(r.ready).toBe(false);
    r.markReady();
    expect(r.ready).toBe(true);
    expect(r.byName('pemi/grid_stress')).toBe(r.get('pemi', 'grid_stress'));
    expect(r.byName('pemi/nope')).toBeUndefined();
  });
});
