/**
 * Resident memory of a loaded generation (issue: memory per row). A generation of about 4M
 * row-versions (wssi_us/demand_shock as the benchmark generates its scale points: 268 MB of
 * Arrow) is loaded by `pitcache serve` in its own process, with the allocator setting the
 * image runs with (Dockerfile: MALLOC_MMAP_THRESHOLD_), and its RSS once ready is compared
 * with the Arrow bytes, above the RSS of the same server with no data. The table's own bytes
 * (GET /admin/status) are checked against the same bytes, and the typed arrays of the same
 * generation built on a build thread in this process are counted one by one.
 *
 * The issue's goal is 1.2x. This dataset is the hardest case for it: 67 bytes of Arrow a
 * row, of which nothing is string bytes. The table holds about 79 (its columns, 55 bytes:
 * strings in 1 or 2 bytes of code; plus the per-row threshold, the per-key index and the step
 * lists of the metadata: docs/snapshots.md#memory), 1.18x; the process above an empty one
 * 1.29-1.32x (the allocator's and the threads' slack on top), so that bound is looser.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_ADMIN_KEY } from '../bench/data/ensure-data.js';
import { BUILTIN_CATALOG } from '../src/catalog/builtin.js';
import { floorUsOf } from '../src/catalog/catalog.js';
import { buildParts, WorkerTableBuilder } from '../src/generations/table-builder.js';
import { objectPath, parseManifest, partsOf } from '../src/snapshot/manifest.js';
import { tableArrays } from './support/table-arrays.js';
import { writeScaleSource } from './support/load-memory-data.js';
import { startServeProcess } from './support/serve-process.js';

/** As the Dockerfile sets it: build scratch over 4 MiB is mapped on its own and given back when freed. */
const ALLOCATOR = { MALLOC_MMAP_THRESHOLD_: '4194304' };

function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m === null) throw new Error('no VmRSS');
  return Number(m[1]) * 1024;
}

async function settledRss(url: string, pid: number): Promise<number> {
  // Past the load: the serving thread answers, and the process has had a moment to free scratch.
  await fetch(`${url}/readyz`);
  await new Promise((r) => setTimeout(r, 2000));
  return rssBytes(pid);
}

describe('resident memory after load', () => {
  let dir: string;
  let data: { rows: number; arrowBytes: number; keys: string };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-load-memory-'));
    data = await writeScaleSource(join(dir, 'src'), 4e6);
  }, 300_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('a loaded generation holds at most 1.2x its Arrow bytes in typed arrays (every array reachable from its table, counted once)', async () => {
    // As a server builds it: the parts moved to a build thread, the table back on shared memory.
    const folder = join(dir, 'src', 'wssi_us', 'demand_shock');
    const manifest = parseManifest(await readFile(join(folder, 'manifest.json')));
    const refs = partsOf(manifest);
    const parts = await Promise.all(refs.map((r) => readFile(join(dir, 'src', objectPath('wssi_us', 'demand_shock', r.object)))));
    const arrowBytes = parts.reduce((n, b) => n + b.byteLength, 0);
    const builder = new WorkerTableBuilder(1);
    try {
      // The product's vintage floor, as its server loads it (rows observed before it are steps of their own).
      const floorUs = floorUsOf(BUILTIN_CATALOG.product('wssi_us')!.floor);
      const table = await buildParts(builder, parts, { parts: refs, filterColumns: [], floorUs });
      const arrays = tableArrays(table);
      let bytes = 0;
      for (const b of arrays.values()) bytes += b;
      const report = [...arrays].map(([path, b]) => `${path} ${(b / table.rows).toFixed(2)}`).join(', ');
      console.log(
        `typed arrays ${(bytes / table.rows).toFixed(2)} bytes a row over ${(arrowBytes / table.rows).toFixed(2)} of Arrow: ${(bytes / arrowBytes).toFixed(3)}x (${report})`,
      );
      expect(table.rows).toBe(data.rows);
      expect(bytes / arrowBytes, report).toBeLessThanOrEqual(1.2);
      // What the server reports as the table's bytes (/admin/status, the retention budget) is what it holds.
      expect(table.byteSize).toBe(bytes);
    } finally {
      await builder.close();
    }
  }, 300_000);

  it('a 4M-row generation: RSS above an empty server within 1.4x its Arrow bytes, the table within 1.2x', async () => {
    const common = ['--keys', data.keys, '--workers', '1', '--row-cache-mb', '0', '--page-cache-mb', '0', '--response-cache-mb', '0'];
    const empty = await startServeProcess(['--source', join(dir, 'empty'), ...common], ALLOCATOR);
    let emptyRss: number;
    try {
      emptyRss = await settledRss(empty.url, empty.child.pid!);
    } finally {
      await empty.kill();
    }
    const loaded = await startServeProcess(['--source', join(dir, 'src'), ...common], ALLOCATOR, 240_000);
    try {
      const rss = await settledRss(loaded.url, loaded.child.pid!);
      const status = (await (await fetch(`${loaded.url}/admin/status`, { headers: { 'x-api-key': BENCH_ADMIN_KEY } })).json()) as {
        datasets: Array<{ dataset: string; rows: number | null; table_bytes: number | null }>;
      };
      const ds = status.datasets.find((d) => d.rows === data.rows);
      expect(ds, JSON.stringify(status).slice(0, 500)).toBeDefined();
      // The table: its columns, plus the indexes (79 bytes a row over 67).
      expect(ds!.table_bytes! / data.arrowBytes).toBeLessThanOrEqual(1.2);
      const ratio = (rss - emptyRss) / data.arrowBytes;
      const report = `RSS ${(rss / 2 ** 20).toFixed(0)} MiB, empty ${(emptyRss / 2 ** 20).toFixed(0)} MiB, Arrow ${(data.arrowBytes / 2 ** 20).toFixed(0)} MiB: ${ratio.toFixed(3)}x above empty, ${(rss / data.arrowBytes).toFixed(3)}x in all`;
      console.log(report, JSON.stringify(ds));
      expect(ratio, report).toBeLessThan(1.4);
    } finally {
      await loaded.kill();
    }
  }, 360_000);
});
