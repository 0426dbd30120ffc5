/**
 * Peak memory of a streamed load (contract 14): "peak memory of a load stays within the
 * generations in force + the new generation's columns + the parts in flight". A generation
 * of about 1.5M row-versions (wssi_us/demand_shock as the benchmark generates it, about 100
 * MB of Arrow) cut into 12 parts is loaded by `pitcache serve` in its own process, with the
 * allocator setting of the image (Dockerfile: MALLOC_MMAP_THRESHOLD_). Its peak RSS
 * (VmHWM) above that of the same server loading a tiny generation (its build thread started) is checked against the new table's
 * bytes (GET /admin/status) plus PARTS_IN_FLIGHT parts plus the build's scratch: a loader
 * that held every part at once (the whole generation's Arrow bytes) next to the table, or
 * a second copy of the table at the end of its build, does not fit.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BENCH_ADMIN_KEY } from '../bench/data/ensure-data.js';
import { PARTS_IN_FLIGHT } from '../src/generations/load-generation.js';
import { writePartedScaleSource, writeScaleSource } from './support/load-memory-data.js';
import { startServeProcess } from './support/serve-process.js';

const ALLOCATOR = { MALLOC_MMAP_THRESHOLD_: '4194304' };
const MiB = 2 ** 20;

function status(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (m === null) throw new Error(`no ${field}`);
  return Number(m[1]) * 1024;
}

describe('peak memory of a streamed load of many parts', () => {
  let dir: string;
  let data: Awaited<ReturnType<typeof writePartedScaleSource>>;
  let tiny: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-load-peak-'));
    data = await writePartedScaleSource(dir, 1.5e6, 12);
    tiny = join(dir, 'tiny');
    await writeScaleSource(tiny, 2e4);
  }, 300_000);
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('peak RSS above a server of a tiny generation within the table + the parts in flight + scratch, well below the table + every part', async () => {
    expect(data.parts).toBe(12);
    const common = ['--keys', data.keys, '--workers', '1', '--row-cache-mb', '0', '--page-cache-mb', '0', '--response-cache-mb', '0'];
    // The baseline has loaded a tiny generation: its build thread exists (a thread and its modules are not the load's).
    const empty = await startServeProcess(['--source', tiny, ...common], ALLOCATOR);
    let emptyPeak: number;
    try {
      await fetch(`${empty.url}/readyz`);
      emptyPeak = status(empty.child.pid!, 'VmHWM');
    } finally {
      await empty.kill();
    }
    const loaded = await startServeProcess(['--source', join(dir, 'src'), ...common], ALLOCATOR, 240_000);
    try {
      await fetch(`${loaded.url}/readyz`);
      const peak = status(loaded.child.pid!, 'VmHWM');
      const body = (await (await fetch(`${loaded.url}/admin/status`, { headers: { 'x-api-key': BENCH_ADMIN_KEY } })).json()) as {
        datasets: Array<{ rows: number | null; bytes: number | null; state: string; last_error: string | null }>;
      };
      const ds = body.datasets.find((d) => d.rows === data.rows);
      expect(ds, JSON.stringify(body).slice(0, 600)).toBeDefined();
      const table = ds!.bytes!;
      const inFlight = PARTS_IN_FLIGHT * data.largestPart;
      const above = peak - emptyPeak;
      const report =
        `peak ${(peak / MiB).toFixed(0)} MiB, empty ${(emptyPeak / MiB).toFixed(0)} MiB, above ${(above / MiB).toFixed(0)} MiB; ` +
        `table ${(table / MiB).toFixed(0)} MiB, Arrow ${(data.arrowBytes / MiB).toFixed(0)} MiB in ${data.parts} parts (largest ${(data.largestPart / MiB).toFixed(1)} MiB, ${PARTS_IN_FLIGHT} in flight)`;
      console.log(report);
      // Scratch: the sort of the largest part, the thresholds' step lists (a fraction of the table).
      expect(above, report).toBeLessThan(table + inFlight + 0.45 * table);
      // What a loader holding every part next to the table would need at least.
      expect(above, report).toBeLessThan(table + data.arrowBytes);
    } finally {
      await loaded.kill();
    }
  }, 360_000);
});
