import type { Timers } from '../time/timers.js';
import { fullGc } from './full-gc.js';

/** The first look, after a collection, at whether what was dropped is gone; doubled after each look that finds some left. */
const FIRST_LOOK_MS = 1000;
/** Looks (each with a collection) before a thread stops trying until the next drop: one held by a request in flight goes with that request. */
const MAX_LOOKS = 8;

/**
 * Gives back the memory of the generations a thread lets go (docs/snapshots.md#release: released by the memory budget
 * or --cursor-idle, or a table message it did not keep), in that thread.
 *
 * A table's columns are SharedArrayBuffers that every thread holding the generation wraps
 * in its own objects; the memory goes only when every thread's wrappers are collected. V8
 * counts a shared backing store as 0 bytes in each isolate (it cannot tell which one owns
 * it), so dropping a generation adds nothing to what makes V8 collect: a thread that
 * allocates little JavaScript (a serving thread, the loading thread) keeps the wrappers of
 * every generation it dropped until some full collection happens, which may be hundreds of
 * generations later. Nothing reachable holds them (heap snapshots of each thread show
 * exactly the live and retained generations): they are garbage nobody collects.
 *
 * So a thread that drops a generation runs one full collection soon after (on the next
 * turn, coalescing drops), then looks whether the buffers were finalized; any left (a
 * request in flight still answering from it) get another collection later, backing off.
 */
export class GenerationReaper {
  private readonly finalized: FinalizationRegistry<number>;
  private buffers = 0;
  private bytes = 0;
  private total = 0;
  private timer: unknown = null;
  private looks = 0;
  private stopped = false;

  constructor(
    private readonly timers: Timers,
    private readonly collect: () => void = fullGc,
  ) {
    this.finalized = new FinalizationRegistry((size) => {
      this.buffers--;
      this.bytes -= size;
    });
  }

  /** This thread no longer references `dropped` (a Generation, a Table, a table message): its shared memory is to be freed. */
  dropped(dropped: object): void {
    const found = sharedBuffersOf(dropped);
    if (found.length === 0) return;
    for (const b of found) {
      this.finalized.register(b, b.byteLength);
      this.buffers++;
      this.bytes += b.byteLength;
      this.total += b.byteLength;
    }
    this.looks = 0;
    this.arm(0);
  }

  /** Bytes of shared memory this thread was told it dropped, since it started (collected or not). */
  get droppedBytes(): number {
    return this.total;
  }

  /** Bytes of dropped shared memory this thread has not collected yet. */
  get unreclaimedBytes(): number {
    return this.bytes;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = null;
  }

  private arm(ms: number): void {
    if (this.stopped) return;
    if (this.timer !== null) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => this.reap(), ms);
  }

  /** On a turn of its own: the dropping code's frames (which may still name the generation) are gone by then. */
  private reap(): void {
    this.timer = null;
    if (this.buffers === 0 || this.looks >= MAX_LOOKS) return;
    this.collect();
    // Finalizers run after this turn: look again later, collecting again if some are left.
    this.arm(FIRST_LOOK_MS * 2 ** this.looks++);
  }
}

/** Every distinct SharedArrayBuffer under `root` (typed arrays' buffers, through plain objects, arrays and class instances). */
export function sharedBuffersOf(root: object): SharedArrayBuffer[] {
  const found = new Set<SharedArrayBuffer>();
  const seen = new Set<object>();
  const stack: object[] = [root];
  while (stack.length > 0) {
    const x = stack.pop()!;
    if (seen.has(x)) continue;
    seen.add(x);
    if (ArrayBuffer.isView(x)) {
      if (x.buffer instanceof SharedArrayBuffer) found.add(x.buffer);
      continue;
    }
    if (x instanceof SharedArrayBuffer) {
      found.add(x);
      continue;
    }
    if (x instanceof Map) {
      for (const v of x.values()) if (typeof v === 'object' && v !== null) stack.push(v);
      continue;
    }
    for (const v of Object.values(x)) if (typeof v === 'object' && v !== null) stack.push(v);
  }
  return [...found];
}
