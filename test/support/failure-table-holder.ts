import { parentPort } from 'node:worker_threads';

/**
 * Another serving thread caught inside the failed-authentication table's critical sections
 * (test/auth-failure-table-locks.test.ts): it holds the writers' lock, or is halfway
 * through writing a slot, for `holdMs`, while the test thread reads or writes the table.
 * The words it touches are those of src/auth/failure-table.ts's layout, written out by the test.
 */
export type HolderJob =
  | { readonly kind: 'lock'; readonly words: Int32Array; readonly lock: number; readonly holdMs: number }
  | { readonly kind: 'slot'; readonly words: Int32Array; readonly seq: number; readonly word: number; readonly torn: number; readonly holdMs: number };

/** What the holder saw: for `lock`, whether any other word of the table changed while it held the lock. */
export interface HolderReport {
  readonly changedWhileHeld: boolean;
}

const pause = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

parentPort!.on('message', (job: HolderJob) => {
  const w = job.words;
  if (job.kind === 'lock') {
    if (Atomics.compareExchange(w, job.lock, 0, 1) !== 0) throw new Error('the lock was taken');
    const before = w.slice();
    parentPort!.postMessage('inside');
    pause(job.holdMs);
    const after = w.slice();
    const changedWhileHeld = after.some((v, i) => i !== job.lock && v !== before[i]);
    Atomics.store(w, job.lock, 0);
    parentPort!.postMessage({ changedWhileHeld } satisfies HolderReport);
    return;
  }
  // A writer inside the slot: its version odd, one word not yet its final value.
  const seq = Atomics.load(w, job.seq);
  const value = Atomics.load(w, job.word);
  Atomics.store(w, job.seq, seq + 1);
  Atomics.store(w, job.word, job.torn);
  parentPort!.postMessage('inside');
  pause(job.holdMs);
  Atomics.store(w, job.word, value);
  Atomics.store(w, job.seq, seq + 2);
  parentPort!.postMessage({ changedWhileHeld: false } satisfies HolderReport);
});
