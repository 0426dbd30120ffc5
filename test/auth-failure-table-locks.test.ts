/**
 * The failed-authentication table's two guards (src/auth/failure-table.ts,
 * docs/keys.md#throttle), each on its own, with another real thread caught inside the
 * critical section (support/failure-table-holder.ts): the writers' lock (a failure waits
 * for it; a prune that finds it taken leaves the sweep to its holder) and each slot's
 * version (a lookup waits out a writer halfway through the slot). The holder keeps its
 * section for a while so that this thread reaches the guard inside it; the assertions hold
 * however long either thread takes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Worker } from 'node:worker_threads';
import { ADDRESS_KEY_WORDS, addressKey } from '../src/auth/address-key.js';
import { FailureTable, allocateAuthFailures, homeSlot } from '../src/auth/failure-table.js';
import { spawnModuleWorker } from '../src/generations/table-builder.js';
import type { HolderJob, HolderReport } from './support/failure-table-holder.js';

/** The layout of src/auth/failure-table.ts, written out here: a 16-word header (the lock first), then 16-word slots (version, address key, failures, ...). */
const LOCK = 0;
const HEADER_WORDS = 16;
const SLOT_WORDS = 16;
const SEQ = 0;
const FAILURES = 1 + ADDRESS_KEY_WORDS;

const T0 = Date.UTC(2026, 10, 29, 4, 0, 0);
const WINDOW_MS = 60_000;
const HOLD_MS = 300;

function key(address: string): Int32Array {
  const k = new Int32Array(ADDRESS_KEY_WORDS);
  addressKey(address, k);
  return k;
}

let holder: Worker | null = null;
afterEach(async () => {
  await holder?.terminate();
  holder = null;
});

/** Starts the holder on `job`; resolves `inside` once it is in its section, `report` once it has left it. */
function hold(job: HolderJob): { inside: Promise<void>; report: Promise<HolderReport> } {
  const w = spawnModuleWorker(new URL('./support/failure-table-holder.ts', import.meta.url));
  holder = w;
  let entered!: () => void;
  const inside = new Promise<void>((resolve) => (entered = resolve));
  const report = new Promise<HolderReport>((resolve, reject) => {
    w.on('message', (m: 'inside' | HolderReport) => (m === 'inside' ? entered() : resolve(m)));
    w.once('error', reject);
  });
  w.postMessage(job);
  return { inside, report };
}

describe('the failed-authentication table under another thread inside it', () => {
  it('a failure waits for the writers lock: nothing is written while another thread holds it, and the failure counts once it is let go', async () => {
    const memory = allocateAuthFailures(64);
    const table = new FailureTable(memory, WINDOW_MS);
    const held = hold({ kind: 'lock', words: memory.words, lock: LOCK, holdMs: HOLD_MS });
    await held.inside;
    table.record(key('10.0.0.7'), T0);
    expect((await held.report).changedWhileHeld).toBe(false);
    expect(table.failures(key('10.0.0.7'), T0 + 1)).toBe(1);
    expect(table.live).toBe(1);
  }, 30_000);

  it('a prune that finds the lock taken leaves the sweep to its holder, and leaves the lock held', () => {
    const memory = allocateAuthFailures(64);
    const table = new FailureTable(memory, WINDOW_MS);
    table.record(key('10.0.0.8'), T0);
    Atomics.store(memory.words, LOCK, 1); // another thread inside
    table.prune(T0 + 2 * WINDOW_MS);
    expect(table.live).toBe(1);
    expect(Atomics.load(memory.words, LOCK)).toBe(1);
    Atomics.store(memory.words, LOCK, 0);
    table.prune(T0 + 2 * WINDOW_MS); // the window ended: swept now
    expect(table.live).toBe(0);
  });

  it('a lookup waits out a writer halfway through the slot (its version odd), then reads the slot as written', async () => {
    const memory = allocateAuthFailures(64);
    const table = new FailureTable(memory, WINDOW_MS);
    const k = key('10.0.0.9');
    for (let i = 0; i < 3; i++) table.record(k, T0 + i);
    const at = HEADER_WORDS + (homeSlot(k) & (table.capacity - 1)) * SLOT_WORDS;
    expect(Atomics.load(memory.words, at + FAILURES)).toBe(3); // the slot this test's layout names
    const held = hold({ kind: 'slot', words: memory.words, seq: at + SEQ, word: at + FAILURES, torn: 1_000_000, holdMs: HOLD_MS });
    await held.inside;
    expect(table.failures(k, T0 + 10)).toBe(3);
    await held.report;
    expect(table.failures(k, T0 + 11)).toBe(3);
  }, 30_000);

  it('an address is never answered with the failures of another in its slot (a table of one slot)', () => {
    const table = new FailureTable(allocateAuthFailures(1), WINDOW_MS);
    for (let i = 0; i < 3; i++) table.record(key('10.0.0.1'), T0 + i);
    expect(table.failures(key('10.0.0.1'), T0 + 10)).toBe(3);
    expect(table.failures(key('10.0.0.2'), T0 + 10)).toBe(0);
  });
});
