/**
 * The failed-authentication table every serving thread shares (docs/keys.md#throttle): how
 * an address is keyed (IPv4 and its IPv4-mapped form count together, IPv6 in any spelling,
 * text that is no address apart from every address), throttles over one memory counting
 * together, real threads failing at once losing no failure, real epoch times (above
 * 2^32 ms), eviction, reuse of ended windows and a prune seen by every thread.
 */
import { describe, expect, it } from 'vitest';
import { ADDRESS_KEY_WORDS, addressKey } from '../src/auth/address-key.js';
import { AuthThrottle, DEFAULT_TRACKED_ADDRESSES, authFailureMemory } from '../src/auth/auth-throttle.js';
import { resolveServeOptions } from '../src/config/serve-options.js';

const DEFAULT_AUTH_FAIL_LIMIT = resolveServeOptions().authFailLimit;
import { FailureTable, allocateAuthFailures, homeSlot } from '../src/auth/failure-table.js';
import { spawnModuleWorker } from '../src/generations/table-builder.js';
import type { FailureJob } from './support/auth-failure-hammer.js';

const T0 = Date.UTC(2026, 10, 29, 4, 0, 0); // above 2^32 ms: the window's start takes both words
const MINUTE = { count: 3, windowMs: 60_000 };

function key(text: string): number[] {
  const out = new Int32Array(ADDRESS_KEY_WORDS);
  addressKey(text, out);
  return [...out];
}

describe('address keys', () => {
  it('IPv4 is keyed as its IPv4-mapped IPv6 address; IPv6 in any spelling as its 16 bytes', () => {
    expect(key('127.0.0.2')).toEqual([0, 0, 0xffff, 0x7f000002]);
    expect(key('::ffff:127.0.0.2')).toEqual(key('127.0.0.2'));
    expect(key('0000:0000:0000:0000:0000:ffff:7f00:0002')).toEqual(key('127.0.0.2'));
    expect(key('255.254.0.9')).toEqual([0, 0, 0xffff, (255 << 24) | (254 << 16) | 9]);
    expect(key('0.0.0.0')).toEqual([0, 0, 0xffff, 0]);
    expect(key('::1')).toEqual([0, 0, 0, 1]);
    expect(key('0000:0000:0000:0000:0000:0000:0000:0001')).toEqual([0, 0, 0, 1]);
    expect(key('2001:db8::8:800:200c:417a')).toEqual([0x20010db8, 0, 0x00080800, 0x200c417a]);
    expect(key('[fe80::1%eth0]')).toEqual(key('fe80::1'));
  });

  it.each([
    '1.2.3.256',
    '1.2.3',
    '1.2.3.',
    '1.2.3.4.',
    '.1.2.3',
    '1..2.3',
    '1.2.3.4.5',
    '1234.1.1.1',
    '0001.2.3.4',
    '1.2.3.x',
    '1.2.3.-',
    '1.2.3. ',
    '',
    'unknown',
    ':::',
    '1:2',
  ])('%j is no IPv4 or IPv6 address: keyed under 0100::/64, apart from every address and from other text', (text) => {
    const k = key(text);
    expect(k.slice(0, 2)).toEqual([0x0100_0000, 0]);
    expect(k).not.toEqual(key(`${text}!`));
  });

  it('text that is no address never shares a key with another text of the usual kinds', () => {
    const texts = ['a', 'b', 'unknown', '', ' 10.0.0.1', '10.0.0.1 ', 'localhost', '1.2.3.4.5'];
    expect(new Set(texts.map((t) => key(t).join())).size).toBe(texts.length);
  });
});

describe('one table for every thread', () => {
  it('is made once at start: 65,536 addresses when throttling, one slot when off', () => {
    expect(new FailureTable(authFailureMemory(DEFAULT_AUTH_FAIL_LIMIT), 60_000).capacity).toBe(DEFAULT_TRACKED_ADDRESSES);
    expect(DEFAULT_TRACKED_ADDRESSES).toBe(65_536);
    expect(new FailureTable(authFailureMemory({ count: 0, windowMs: 60_000 }), 60_000).capacity).toBe(1);
    // 16 words a slot and a 16-word header: 4 MiB for the default.
    expect(authFailureMemory(DEFAULT_AUTH_FAIL_LIMIT).words.byteLength).toBe(64 * (65_536 + 1));
  });

  it('two throttles over one memory count one address together; another address is untouched', () => {
    const memory = allocateAuthFailures(64);
    const [a, b] = [new AuthThrottle(MINUTE, memory), new AuthThrottle(MINUTE, memory)];
    a.failed('127.0.0.2', T0);
    b.failed('127.0.0.2', T0 + 1);
    expect(a.retryAfterSeconds('127.0.0.2', T0 + 2)).toBe(0);
    expect(b.active).toBe(true);
    a.failed('::ffff:127.0.0.2', T0 + 3); // the same client, as a dual-stack socket names it
    expect(b.retryAfterSeconds('127.0.0.2', T0 + 4)).toBe(60);
    expect(a.retryAfterSeconds('127.0.0.2', T0 + 59_001)).toBe(1);
    expect(a.retryAfterSeconds('127.0.0.1', T0 + 4)).toBe(0);
    expect(b.retryAfterSeconds('127.0.0.2', T0 + 60_000)).toBe(0); // the window began at T0
  });

  it('real threads failing at once lose no failure (the writers lock), while reading the slots (the seqlock)', async () => {
    const memory = allocateAuthFailures(64);
    const start = new SharedArrayBuffer(4);
    const addresses = ['10.0.0.1', '10.0.0.2', '10.0.0.3', 'fd00::7'];
    const rounds = 20_000;
    const jobs: FailureJob[] = [0, 1].map(() => ({ memory, addresses, rounds, nowMs: T0, start }));
    const workers = jobs.map(() => spawnModuleWorker(new URL('./support/auth-failure-hammer.ts', import.meta.url)));
    try {
      let ready = 0;
      const refused = await Promise.all(
        workers.map(
          (w, i) =>
            new Promise<number>((resolve, reject) => {
              w.on('message', (m: number | 'ready') => {
                if (m !== 'ready') resolve(m);
                else if (++ready === workers.length) {
                  Atomics.store(new Int32Array(start), 0, 1);
                  Atomics.notify(new Int32Array(start), 0);
                }
              });
              w.once('error', reject);
              w.postMessage(jobs[i]);
            }),
        ),
      );
      expect(refused).toEqual([0, 0]);
    } finally {
      await Promise.all(workers.map((w) => w.terminate()));
    }
    const table = new FailureTable(memory, 60_000);
    expect(table.live).toBe(addresses.length);
    for (const a of addresses) {
      const k = new Int32Array(ADDRESS_KEY_WORDS);
      addressKey(a, k);
      expect(table.failures(k, T0 + 1)).toBe(2 * rounds);
      expect(table.start).toBe(T0);
    }
  }, 60_000);

  it('a thread prunes when the shared time is due, not when its own copy of it is', () => {
    const memory = allocateAuthFailures(64);
    const [a, b] = [new AuthThrottle(MINUTE, memory), new AuthThrottle(MINUTE, memory)];
    a.retryAfterSeconds('x', T0); // due again at T0 + 60 s
    b.retryAfterSeconds('x', T0 + 1); // b's copy: T0 + 60 s
    a.failed('10.0.0.1', T0 + 10_000); // its window ends at T0 + 70 s
    a.retryAfterSeconds('x', T0 + 60_000); // a prunes (nothing ended): due at T0 + 120 s
    b.retryAfterSeconds('x', T0 + 80_000); // b's copy is due, the shared time is not: no sweep
    expect(a.tracked).toBe(1);
    b.retryAfterSeconds('x', T0 + 120_000);
    expect(a.tracked).toBe(0);
  });

  it('a full probe range evicts its oldest window; a ninth address of one home slot never lands past the range', () => {
    const memory = allocateAuthFailures(16);
    const t = new AuthThrottle({ count: 1, windowMs: 60_000 }, memory);
    // Nine addresses whose probe ranges start at one slot of the sixteen.
    const k = new Int32Array(ADDRESS_KEY_WORDS);
    const home = (a: string): number => {
      addressKey(a, k);
      return homeSlot(k) & 15;
    };
    const same: string[] = [];
    for (let i = 0; same.length < 9; i++) if (home(`10.9.${i >> 8}.${i & 255}`) === home('10.9.0.0')) same.push(`10.9.${i >> 8}.${i & 255}`);
    same.slice(0, 8).forEach((a, i) => t.failed(a, T0 + i));
    expect(t.tracked).toBe(8);
    t.failed(same[8]!, T0 + 8);
    expect(t.tracked).toBe(8);
    expect(same.map((a) => t.retryAfterSeconds(a, T0 + 9))).toEqual([0, 60, 60, 60, 60, 60, 60, 60, 60]);
  });

  it("one thread's prune empties ended windows for all: `active` turns false on the other", () => {
    const memory = allocateAuthFailures(64);
    const [a, b] = [new AuthThrottle(MINUTE, memory), new AuthThrottle(MINUTE, memory)];
    a.retryAfterSeconds('x', T0); // a prunes now: the next prune is due for every thread at T0 + 60 s
    a.failed('10.0.0.1', T0 + 1000);
    b.failed('10.0.0.2', T0 + 30_000);
    expect(b.retryAfterSeconds('10.0.0.9', T0 + 30_001)).toBe(0); // b's first look: not due, no sweep
    expect(a.tracked).toBe(2);
    a.retryAfterSeconds('10.0.0.9', T0 + 61_000); // due: 10.0.0.1's window ended, 10.0.0.2's has not
    expect(b.tracked).toBe(1);
    b.retryAfterSeconds('10.0.0.9', T0 + 90_000); // b knows the next prune is due at T0 + 121 s: nothing yet
    expect(a.tracked).toBe(1);
    b.retryAfterSeconds('10.0.0.9', T0 + 121_000);
    expect(a.active).toBe(false);
    expect(b.active).toBe(false);
  });

  it('a new address takes an empty slot, then a slot whose window ended, and only then evicts the oldest open window', () => {
    const memory = allocateAuthFailures(2);
    const t = new AuthThrottle({ count: 1, windowMs: 1000 }, memory);
    t.failed('a', T0);
    t.failed('b', T0 + 500);
    expect(t.tracked).toBe(2);
    t.failed('c', T0 + 1200); // a's window ended at T0 + 1000: c takes its slot, b stays
    expect(t.retryAfterSeconds('b', T0 + 1201)).toBe(1);
    expect(t.retryAfterSeconds('c', T0 + 1201)).toBe(1);
    expect(t.tracked).toBe(2);
    t.failed('d', T0 + 1300); // both open: b began first and goes
    expect(t.retryAfterSeconds('b', T0 + 1301)).toBe(0);
    expect(t.retryAfterSeconds('c', T0 + 1301)).toBe(1);
    expect(t.retryAfterSeconds('d', T0 + 1301)).toBe(1);
  });

  it('an address past its window starts a new one in its own slot (counted once, not twice)', () => {
    const memory = allocateAuthFailures(4);
    const t = new AuthThrottle({ count: 2, windowMs: 1000 }, memory);
    t.failed('a', T0);
    t.failed('a', T0 + 1000);
    expect(t.tracked).toBe(1);
    expect(t.retryAfterSeconds('a', T0 + 1001)).toBe(0);
    t.failed('a', T0 + 1002);
    expect(t.retryAfterSeconds('a', T0 + 1003)).toBe(1);
    expect(t.tracked).toBe(1);
  });

  it('finds an address past occupied and emptied slots of its probe range', () => {
    const memory = allocateAuthFailures(8);
    const t = new AuthThrottle({ count: 1, windowMs: 1000 }, memory);
    const many = Array.from({ length: 8 }, (_, i) => `10.1.0.${i}`);
    for (const a of many) t.failed(a, T0);
    expect(t.tracked).toBe(8);
    for (const a of many) expect(t.retryAfterSeconds(a, T0 + 1)).toBe(1);
    t.retryAfterSeconds('x', T0 + 1000); // every window ended, but the first look (T0 + 1) pruned: the next is due at T0 + 1001
    expect(t.tracked).toBe(8);
    t.retryAfterSeconds('x', T0 + 1001); // due: all emptied
    expect(t.tracked).toBe(0);
    t.failed(many[7]!, T0 + 1500);
    t.failed(many[3]!, T0 + 1500);
    expect(t.retryAfterSeconds(many[7]!, T0 + 1501)).toBe(1);
    expect(t.retryAfterSeconds(many[3]!, T0 + 1501)).toBe(1);
    expect(t.retryAfterSeconds(many[0]!, T0 + 1501)).toBe(0);
  });
});
