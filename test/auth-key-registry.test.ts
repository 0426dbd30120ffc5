/**
 * KeyRegistry's own defences (auth/key-registry.ts): a config built by hand (not through
 * parseKeysFile) with a duplicate id or a duplicate sha256 is refused, and the cache of
 * presented strings is bounded (strings over 256 characters are never kept; at most
 * `cacheSize` entries, least recently used first out; 0 = none; a replaced registry
 * brings its own). The cache is seen through the SHA-256s the registry computes: Node's
 * createHash, counted with syncBuiltinESMExports so keys-file.ts's import sees the count.
 */
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { KeyRegistry } from '../src/auth/key-registry.js';
import { sha256Hex, type KeyEntry, type KeysConfig } from '../src/auth/keys-file.js';

const entry = (id: string, key: string): KeyEntry => ({ id, sha256: sha256Hex(key), plaintext: false, products: '*', admin: false, rateLimit: null });
const config = (...keys: KeyEntry[]): KeysConfig => ({ keys, origin: 'test' });

let hashes = 0;
const createHash = crypto.createHash;
beforeAll(() => {
  crypto.createHash = ((...args: Parameters<typeof createHash>) => {
    hashes++;
    return createHash(...args);
  }) as typeof createHash;
  syncBuiltinESMExports();
});
afterAll(() => {
  crypto.createHash = createHash;
  syncBuiltinESMExports();
});
beforeEach(() => {
  hashes = 0;
});

/** How many SHA-256s the registry computed to authenticate `presented`, in order. */
function hashed(r: KeyRegistry, ...presented: string[]): number {
  const before = hashes;
  for (const p of presented) r.authenticate(p);
  return hashes - before;
}

describe('KeyRegistry refuses a config with a duplicate', () => {
  it('id (another key)', () => {
    expect(() => new KeyRegistry(config(entry('a', 'k1'), entry('b', 'k2'), entry('a', 'k3')))).toThrow('keys[2] (id "a"): duplicate id or key');
  });

  it('sha256 (another id)', () => {
    expect(() => new KeyRegistry(config(entry('a', 'k1'), entry('b', 'k1')))).toThrow('keys[1] (id "b"): duplicate id or key');
  });

  it('takes distinct ids and keys; an id or index it does not hold is no key', () => {
    const r = new KeyRegistry(config(entry('a', 'k1'), entry('b', 'k2')));
    expect([r.authenticate('k1'), r.authenticate('k2'), r.indexOfId('b'), r.indexOfId('c')]).toEqual([0, 1, 1, -1]);
    expect(r.id(1)).toBe('b');
    expect(() => r.id(2)).toThrow(new RangeError('no key at index 2'));
    expect(JSON.stringify(r)).toBe('{"keys":2}');
  });
});

describe("KeyRegistry's cache of presented strings", () => {
  const keys = config(entry('a', 'k1'), entry('b', 'x'.repeat(256)), entry('c', 'y'.repeat(257)));

  it('hashes a presented string once, a known key or not; nothing for a missing one', () => {
    const r = new KeyRegistry(keys);
    expect(hashed(r, 'k1', 'k1', 'k1')).toBe(1);
    expect(hashed(r, 'guess', 'guess')).toBe(1);
    expect([r.authenticate('k1'), r.authenticate('guess')]).toEqual([0, -1]);
    expect(hashed(r, '')).toBe(0);
    expect([r.authenticate(''), r.authenticate(null), r.authenticate(undefined)]).toEqual([-1, -1, -1]);
  });

  it('keeps strings of up to 256 characters; longer ones are hashed every time', () => {
    const r = new KeyRegistry(keys);
    expect(hashed(r, 'x'.repeat(256), 'x'.repeat(256))).toBe(1);
    expect(hashed(r, 'y'.repeat(257), 'y'.repeat(257))).toBe(2);
    expect([r.authenticate('x'.repeat(256)), r.authenticate('y'.repeat(257))]).toEqual([1, 2]);
  });

  it('holds at most cacheSize strings, the least recently used going first', () => {
    const r = new KeyRegistry(keys, { cacheSize: 2 });
    expect(hashed(r, 'k1', 'g1', 'k1', 'g2')).toBe(3); // k1 was used after g1: g1 goes
    expect(hashed(r, 'k1', 'g2')).toBe(0);
    expect(hashed(r, 'g1')).toBe(1);
  });

  it('holds 4096 strings by default', () => {
    const r = new KeyRegistry(keys);
    const guesses = Array.from({ length: 4096 }, (_, i) => `guess-${i}`);
    expect(hashed(r, ...guesses)).toBe(4096);
    expect(hashed(r, guesses[0]!)).toBe(0); // all 4096 held: the first is the newest now
    expect(hashed(r, 'one more', guesses[1]!)).toBe(2); // the 4097th put out the least recent
  });

  it('cacheSize 0 keeps none', () => {
    const r = new KeyRegistry(keys, { cacheSize: 0 });
    expect(hashed(r, 'k1', 'k1', 'guess', 'guess')).toBe(4);
    expect(r.authenticate('k1')).toBe(0);
  });

  it('a replaced registry answers from its own cache: a string the old one kept is hashed again', () => {
    const r = new KeyRegistry(keys);
    expect(hashed(r, 'k1', 'k2')).toBe(2);
    r.replace(new KeyRegistry(config(entry('b', 'k2'), entry('a', 'k1'))));
    expect(hashed(r, 'k1', 'k2')).toBe(2);
    expect([r.authenticate('k1'), r.authenticate('k2')]).toEqual([1, 0]);
  });
});
