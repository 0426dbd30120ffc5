/**
 * The in-process bulk bench's data (bench/bulk/bulk-stages.ts): two of the main set's wide
 * datasets with a shorter history, so one process can load them in a minute and still hold
 * millions of rows and thousands of series: wssi_us/demand_shock (2,000 daily county
 * series) and pemi/grid_stress (50 zones x 24 hours = 1,200 hourly series), from START to
 * the main set's end date. Generated once into `<root>/bulk-<start>/` by the main set's own
 * generator (bench/data), reused while its stamp names the same generator version, with the
 * main set's keys.json.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { GENERATOR_VERSION, datasetIdOf, planFor, type DataSetPlan, type DatasetPlan } from '../data/plan.js';
import { writeSnapshot, type WrittenSnapshot } from '../data/write-snapshot.js';
import { keysFile } from '../data/ensure-data.js';
import { parseDate } from '../../src/time/instant.js';

const DATASETS = ['wssi_us/demand_shock', 'pemi/grid_stress'];
const STAMP = '.bench-bulk.json';

/** The main set's plan of DATASETS, starting at `start` (an ISO date). */
export function bulkPlan(start: string): DataSetPlan {
  const main = planFor('main', false);
  const startDay = parseDate(start);
  if (startDay === null) throw new Error(`bad start date ${start}`);
  const datasets = main.datasets.filter((p) => DATASETS.includes(datasetIdOf(p))).map((p): DatasetPlan => ({ ...p, startDay }));
  return { ...main, datasets };
}

export async function ensureBulkData(root: string, start: string, log: (m: string) => void): Promise<{ dir: string; written: WrittenSnapshot[] }> {
  const dir = resolve(root, `bulk-${start}`);
  try {
    const s = JSON.parse(await readFile(join(dir, STAMP), 'utf8')) as { version: string; written: WrittenSnapshot[] };
    if (s.version === GENERATOR_VERSION) return { dir, written: s.written };
  } catch {
    // not generated yet
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const written: WrittenSnapshot[] = [];
  for (const plan of bulkPlan(start).datasets) {
    const t0 = performance.now();
    const w = await writeSnapshot(plan, dir);
    written.push(w);
    log(`  ${w.id}: ${w.rows.toLocaleString('en-US')} rows in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  // The main set's keys: `pitcache serve --source <dir> --keys <dir>/keys.json` serves this data over HTTP too.
  await writeFile(join(dir, 'keys.json'), JSON.stringify(keysFile(), null, 2) + '\n');
  await writeFile(join(dir, STAMP), JSON.stringify({ version: GENERATOR_VERSION, written }, null, 2) + '\n');
  return { dir, written };
}
