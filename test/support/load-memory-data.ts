import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { keysFile } from '../../bench/data/ensure-data.js';
import { planFor } from '../../bench/data/plan.js';
import { writeSnapshot } from '../../bench/data/write-snapshot.js';

/**
 * A source folder holding one generation of wssi_us/demand_shock as the benchmark generates
 * its scale points (county series, revisions, ties, three float columns), cut to `rows`
 * row-versions or about that, with the benchmark's keys file. Returns the Arrow bytes.
 */
export async function writeScaleSource(dir: string, rows: number): Promise<{ rows: number; arrowBytes: number; keys: string }> {
  const plan = planFor('scale-10m', false).datasets[0]!;
  const series = Math.max(1, Math.round((plan.series.length * rows) / 1e7));
  const w = await writeSnapshot({ ...plan, series: plan.series.slice(0, series) }, dir);
  const keys = join(dir, 'keys.json');
  await writeFile(keys, JSON.stringify(keysFile()) + '\n');
  return { rows: w.rows, arrowBytes: w.bytes, keys };
}
