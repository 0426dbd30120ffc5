import { parentPort } from 'node:worker_threads';
import type { RowArenaMemory } from '../../src/format/arenas/row-arena.js';
import { RowCache } from '../../src/format/arenas/row-cache.js';
import { ROW_FORMAT_JSON, ROW_LAYOUT_ALL, RowOwner } from '../../src/format/arenas/row-owner.js';

/** What the test thread asks of a thread on a one-slot arena (test/row-arena-threads.test.ts). */
export interface TearingJob {
  readonly memory: RowArenaMemory;
  readonly role: 'write' | 'read';
  /** Int32 cells: [0] both threads wait on it to start together; [1] the reader sets it when done */
  readonly control: SharedArrayBuffer;
  /** the reader stops after this many copies, or this many ms */
  readonly copies: number;
  readonly ms: number;
}

export interface TearingResult {
  readonly hits: number;
  readonly misses: number;
  readonly keeps: number;
  /** the first copy reported as a hit whose bytes were not row 1's text, if any */
  readonly torn: string | null;
}

/** Rows 1 and 2 of one owner: text of a whole slot's length, every byte the row's own letter. */
const TEARING_OWNER = new RowOwner(5, 0, 0, ROW_FORMAT_JSON | ROW_LAYOUT_ALL);
const TEARING_ROW_BYTES = 504;

/**
 * The writer keeps rows 1 and 2 in turn into the arena's one slot, as two serving threads
 * rendering different rows would; the reader copies row 1 over and over, and every copy
 * it is told is a hit must be row 1's text whole. A copy that overlaps a write is caught
 * by the slot's version word, read again after the copy: that re-read is what this checks.
 */
function run(job: TearingJob): TearingResult {
  const cache = new RowCache(job.memory);
  const control = new Int32Array(job.control);
  const texts = [1, 2].map((row) => Buffer.alloc(TEARING_ROW_BYTES, 0x40 + row));
  const views = texts.map((t) => new DataView(t.buffer, t.byteOffset, t.byteLength));
  parentPort!.postMessage('ready');
  Atomics.wait(control, 0, 0);
  let keeps = 0;
  if (job.role === 'write') {
    // Pauses of random length between keeps (a fixed-seed LCG), so that row 1 stays in the
    // slot long enough to be copied whole, and copies also begin just before a write.
    let x = 12345;
    let spin = 0;
    for (let n = 0; Atomics.load(control, 1) === 0; n++) {
      const i = n & 1;
      cache.keep(TEARING_OWNER, i + 1, views[i]!, 0, TEARING_ROW_BYTES);
      keeps++;
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      for (let k = x >>> 22; k > 0; k--) spin += k;
    }
    if (spin < 0) throw new Error('unreachable: keeps the pauses from being optimised away');
    const s = cache.stats();
    return { hits: s.hits, misses: s.misses, keeps, torn: null };
  }
  const dst = Buffer.alloc(TEARING_ROW_BYTES + 8);
  const dv = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  const until = Date.now() + job.ms;
  let torn: string | null = null;
  for (let n = 0; n < job.copies && torn === null; n++) {
    if ((n & 1023) === 0 && Date.now() > until) break;
    dst.fill(0);
    if (cache.copy(TEARING_OWNER, 1, dv, 3) < 0) continue;
    const got = dst.subarray(3, 3 + TEARING_ROW_BYTES);
    if (!got.equals(texts[0]!)) torn = `copy ${n}: ${got.toString('latin1', 0, 64)}...`;
  }
  Atomics.store(control, 1, 1);
  const s = cache.stats();
  return { hits: s.hits, misses: s.misses, keeps, torn };
}

parentPort!.once('message', (job: TearingJob) => parentPort!.postMessage(run(job)));
