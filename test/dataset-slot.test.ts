/**
 * The slot's transitions, the only way its state changes (the loader decides when, the slot
 * what changes). Generations here are bare values: the slot only stores and hands them out.
 */
import { describe, expect, it } from 'vitest';
import { findProduct } from '../src/catalog/products.js';
import { DatasetRegistry } from '../src/server/dataset-registry.js';
import { DatasetSlot } from '../src/server/dataset-slot.js';
import type { Generation } from '../src/server/generation.js';

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
