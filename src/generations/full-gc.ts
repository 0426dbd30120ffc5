import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

let collect: (() => void) | null = null;

/**
 * One full (major) garbage collection of this thread's heap, now. What it is for:
 * generation-reaper.ts. The function is V8's own `gc`: taken from the process when it runs
 * with --expose-gc, else from a new context made with the flag on. The flag is process-wide
 * and only decides whether NEW contexts get `gc`, so it is left on: turning it off again
 * would race with another thread between its setting the flag and making its context.
 * Should V8 still not hand it over, nothing is collected (never a thrown error in a timer).
 */
export function fullGc(): void {
  if (collect === null) collect = gcFunction();
  collect();
}

function gcFunction(): () => void {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  setFlagsFromString('--expose-gc');
  try {
    const gc = runInNewContext('typeof gc === "function" ? gc : null') as (() => void) | null;
    return gc ?? noCollection;
  } catch {
    return noCollection;
  }
}

function noCollection(): void {}
