import { readFile, rm, writeFile } from 'node:fs/promises';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { join } from 'node:path';
import { keysFile } from '../../bench/data/ensure-data.js';
import { planFor } from '../../bench/data/plan.js';
import { writeSnapshot } from '../../bench/data/write-snapshot.js';
import { LocalSource } from '../../src/source/local-source.js';
import { writePartsGeneration } from '../../src/snapshot/write-generation.js';

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

/**
 * The same generation as writeScaleSource, as `parts` parts of about equal rows (contract
 * 14: cut at series boundaries; the benchmark writes rows in series order). Returns the
 * Arrow bytes of all parts and of the largest one.
 */
export async function writePartedScaleSource(
  dir: string,
  rows: number,
  parts: number,
): Promise<{ rows: number; arrowBytes: number; largestPart: number; parts: number; keys: string }> {
  const single = join(dir, 'single');
  const whole = await writeScaleSource(single, rows);
  const plan = planFor('scale-10m', false).datasets[0]!;
  const ref = { productId: plan.def.productId, dataset: plan.def.dataset };
  const folder = join(single, ref.productId, ref.dataset);
  const manifest = JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as { object: string };
  const table = tableFromIPC(await readFile(join(folder, manifest.object)));
  const seriesKey = JSON.parse(table.schema.metadata.get('pitcache.series_key')!) as string[];
  const keyCols = seriesKey.map((k) => table.getChild(k)!);
  const keyAt = (i: number): string => keyCols.map((c) => String(c.get(i))).join('\u0000');
  const cuts: number[] = [0];
  for (let p = 1; p < parts; p++) {
    let at = Math.max(cuts[cuts.length - 1]! + 1, Math.round((p * table.numRows) / parts));
    while (at < table.numRows && keyAt(at) === keyAt(at - 1)) at++;
    if (at < table.numRows) cuts.push(at);
  }
  cuts.push(table.numRows);
  const bytes = cuts.slice(1).map((end, i) => tableToIPC(table.slice(cuts[i]!, end), 'file'));
  await writePartsGeneration(new LocalSource(join(dir, 'src')), ref, bytes, 1, '2026-11-01T00:00:00Z');
  await rm(single, { recursive: true, force: true });
  return {
    rows: whole.rows,
    arrowBytes: bytes.reduce((n, b) => n + b.byteLength, 0),
    largestPart: Math.max(...bytes.map((b) => b.byteLength)),
    parts: bytes.length,
    keys: await copyKeys(dir),
  };
}

async function copyKeys(dir: string): Promise<string> {
  const keys = join(dir, 'keys.json');
  await writeFile(keys, JSON.stringify(keysFile()) + '\n');
  return keys;
}
