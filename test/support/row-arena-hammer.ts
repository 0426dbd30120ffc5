import { parentPort } from 'node:worker_threads';
import { ByteWriter } from '../../src/format/bytes/byte-writer.js';
import type { PageCacheStats } from '../../src/format/arenas/page-cache.js';
import type { RowArenaMemory } from '../../src/format/arenas/row-arena.js';
import { RowCache } from '../../src/format/arenas/row-cache.js';
import { ROW_FORMAT_JSON } from '../../src/format/arenas/row-owner.js';
import { RowRenderer } from '../../src/format/json/row-renderer.js';
import { rng } from './rng.js';
import { rowTable } from './row-tables.js';

/** What the test thread asks of a hammering thread (test/row-arena-threads.test.ts). */
export interface HammerJob {
  readonly memory: RowArenaMemory;
  readonly seed: number;
  readonly requests: number;
  /** Int32 cell both threads wait on after saying 'ready', so that they start together */
  readonly start: SharedArrayBuffer;
}

export interface HammerResult {
  readonly hits: number;
  readonly misses: number;
  /** the page arena's (null: none) */
  readonly pages: PageCacheStats | null;
  readonly compared: number;
  /** the first answer that differed from a fresh render, if any */
  readonly mismatch: string | null;
}

/**
 * One "serving thread" on a shared arena: two generations (uid 1 and 2: same shape, other
 * values) x two layouts (every column, a projection), overlapping windows of rows, each
 * answer compared byte for byte with a fresh render of the same rows.
 */
function hammer(job: HammerJob): HammerResult {
  const cache = new RowCache(job.memory);
  const renderers: RowRenderer[] = [];
  for (const gen of [1, 2]) {
    const columns = rowTable(10 + gen);
    cache.register(gen, columns);
    for (const layout of [columns, [columns[0]!, columns[2]!]])
      renderers.push(new RowRenderer({ columns: layout }, cache.owners.ownerOf(layout, ROW_FORMAT_JSON)));
  }
  const r = rng(job.seed);
  const out = new ByteWriter(16);
  const fresh = new ByteWriter(16);
  const rows = new Int32Array(64);
  let compared = 0;
  parentPort!.postMessage('ready');
  Atomics.wait(new Int32Array(job.start), 0, 0);
  for (let n = 0; n < job.requests; n++) {
    const renderer = renderers[Math.floor(r() * renderers.length)]!;
    // A walk-forward step: a window over the first 120 rows, so both threads meet on every
    // row; every other one without the rows ≡ 3 mod 7 (superseded versions), so that pages
    // copy in several runs.
    const from = Math.floor(r() * 80);
    const width = 1 + Math.floor(r() * 40);
    const gaps = n % 2 === 1;
    let count = 0;
    for (let i = 0; i < width; i++) if (!gaps || (from + i) % 7 !== 3) rows[count++] = from + i;
    out.reset();
    renderer.writeRowsCached(out, rows, count, cache);
    fresh.reset();
    renderer.writeRows(fresh, rows, count);
    compared++;
    if (Buffer.compare(out.view(), fresh.view()) !== 0) {
      return { ...cache.stats(), compared, mismatch: `${Buffer.from(out.view()).toString()}\n!==\n${Buffer.from(fresh.view()).toString()}` };
    }
  }
  return { ...cache.stats(), compared, mismatch: null };
}

parentPort!.once('message', (job: HammerJob) => parentPort!.postMessage(hammer(job)));
