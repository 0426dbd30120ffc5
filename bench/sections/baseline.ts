/** RSS of a pitcache server with no data: what the memory ratios should be read against. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchData } from '../alternatives/types.js';
import type { HttpServerAlternative } from '../alternatives/http-server.js';
import type { MemoryReading } from '../lib/proc.js';
import { keysFile, BENCH_ADMIN_KEY, BENCH_API_KEY } from '../data/ensure-data.js';

export async function emptyServerMemory(make: () => HttpServerAlternative): Promise<MemoryReading | null> {
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-bench-empty-'));
  const alt = make();
  try {
    await writeFile(join(dir, 'keys.json'), JSON.stringify(keysFile()));
    const empty: BenchData = {
      name: 'empty',
      sourceDir: dir,
      keysPath: join(dir, 'keys.json'),
      apiKey: BENCH_API_KEY,
      adminKey: BENCH_ADMIN_KEY,
      datasets: [],
      totalRows: 0,
      totalArrowBytes: 0,
    };
    await alt.setup(empty);
    return alt.memory();
  } finally {
    await alt.teardown();
    await rm(dir, { recursive: true, force: true });
  }
}
