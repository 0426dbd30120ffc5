import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Publishing drops buffers of megabytes outside the JS heap all the time: each batch's bytes
 * once its columns are taken, each part's columns and bytes once it is written. V8 frees such
 * a buffer only when it collects its owner, on the JS heap's schedule (a publish's heap is
 * small and rarely full), so dropped buffers would pile up in resident memory, tens of MiB
 * at a time (docs/decisions.md#publish-in-bounded-memory). Each drop is counted here, and a
 * full collection is made once they reach DROPPED_BYTES: what is dropped and not yet freed
 * stays below that. A collection of a publish's heap costs some milliseconds to some tens.
 */
export function dropped(bytes: number): void {
  since += bytes;
  if (since < DROPPED_BYTES) return;
  since = 0;
  gc();
}

/** Dropped bytes between two collections, at most (and the last drop). */
export const DROPPED_BYTES = 16 * 2 ** 20;

let since = 0;

const gc: () => void = (() => {
  setFlagsFromString('--expose-gc');
  const collect = runInNewContext('gc') as () => void;
  setFlagsFromString('--no-expose-gc');
  return collect;
})();
