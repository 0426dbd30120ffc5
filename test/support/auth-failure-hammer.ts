import { parentPort } from 'node:worker_threads';
import { AuthThrottle } from '../../src/auth/auth-throttle.js';
import type { AuthFailureMemory } from '../../src/auth/failure-table.js';

/** What the test thread asks of a failing "serving thread" (test/auth-failure-table.test.ts). */
export interface FailureJob {
  readonly memory: AuthFailureMemory;
  readonly addresses: readonly string[];
  /** failures per address, interleaved over the addresses */
  readonly rounds: number;
  readonly nowMs: number;
  /** Int32 cell both threads wait on after saying 'ready', so that they fail at once */
  readonly start: SharedArrayBuffer;
}

/** Looks each address up (as a request would) and counts a failure for it, `rounds` times; answers how many lookups said "refused". */
parentPort!.on('message', (job: FailureJob) => {
  const throttle = new AuthThrottle({ count: 1_000_000, windowMs: 60_000 }, job.memory);
  parentPort!.postMessage('ready');
  Atomics.wait(new Int32Array(job.start), 0, 0);
  let refused = 0;
  for (let r = 0; r < job.rounds; r++) {
    for (const a of job.addresses) {
      if (throttle.retryAfterSeconds(a, job.nowMs) > 0) refused++;
      throttle.failed(a, job.nowMs);
    }
  }
  parentPort!.postMessage(refused);
});
