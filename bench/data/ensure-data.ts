/**
 * A benchmark data set on disk: generated once into `<root>/<name>/` (or
 * `<root>/quick-<name>/`), reused while the stamp says the same generator version.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BenchData, BenchDataset, BenchColumn } from '../alternatives/types.js';
import { findProduct } from '../../src/catalog/products.js';
import { objectPath } from '../../src/snapshot/manifest.js';
import { GENERATOR_VERSION, datasetIdOf, planFor, seriesKeyOf, type DataSetName } from './plan.js';
import { ensureCsv } from './csv-file.js';
import { readBatches } from './read-back.js';
import { writeSnapshot, type WrittenSnapshot } from './write-snapshot.js';

export const BENCH_API_KEY = 'pitcache-bench-key';
export const BENCH_ADMIN_KEY = 'pitcache-bench-admin-key';
const STAMP = '.bench-data.json';

interface Stamp {
  version: string;
  name: DataSetName;
  quick: boolean;
  datasets: (WrittenSnapshot & { columns: BenchColumn[] })[];
}

export function dataDirOf(root: string, name: DataSetName, quick: boolean): string {
  return resolve(root, quick ? `quick-${name}` : name);
}

export async function ensureData(root: string, name: DataSetName, quick: boolean, log: (m: string) => void = () => {}): Promise<BenchData> {
  const dir = dataDirOf(root, name, quick);
  const stamp = await readStamp(dir);
  if (stamp !== null && stamp.version === GENERATOR_VERSION && stamp.name === name && stamp.quick === quick) {
    return toBenchData(dir, stamp);
  }
  log(`generating ${dir} (${GENERATOR_VERSION})`);
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const datasets: Stamp['datasets'] = [];
  for (const plan of planFor(name, quick).datasets) {
    const t0 = performance.now();
    const w = await writeSnapshot(plan, dir);
    const columns = await columnsOf(join(dir, objectPath(plan.def.productId, plan.def.dataset, w.object)));
    datasets.push({ ...w, columns });
    log(`  ${w.id}: ${w.rows.toLocaleString('en-US')} rows, ${(w.bytes / 2 ** 20).toFixed(1)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  await writeFile(join(dir, 'keys.json'), JSON.stringify(keysFile(), null, 2) + '\n');
  const s: Stamp = { version: GENERATOR_VERSION, name, quick, datasets };
  await writeFile(join(dir, STAMP), JSON.stringify(s, null, 2) + '\n');
  return toBenchData(dir, s);
}

/** Plaintext keys: local benchmark data only. Unlimited, so the limiter never answers 429. */
export function keysFile(): { keys: object[] } {
  return {
    keys: [
      { id: 'bench', key: BENCH_API_KEY, products: ['*'] },
      { id: 'bench-admin', key: BENCH_ADMIN_KEY, products: ['*'], admin: true },
    ],
  };
}

async function columnsOf(arrowPath: string): Promise<BenchColumn[]> {
  for await (const b of readBatches(arrowPath)) return b.columnTypes;
  throw new Error(`${arrowPath}: no record batch`);
}

async function readStamp(dir: string): Promise<Stamp | null> {
  try {
    return JSON.parse(await readFile(join(dir, STAMP), 'utf8')) as Stamp;
  } catch {
    return null;
  }
}

function toBenchData(dir: string, stamp: Stamp): BenchData {
  const plans = new Map(planFor(stamp.name, stamp.quick).datasets.map((p) => [datasetIdOf(p), p]));
  const datasets = stamp.datasets.map((w): BenchDataset => {
    const plan = plans.get(w.id);
    if (plan === undefined) throw new Error(`stamp of ${dir} names ${w.id}, which the plan does not have`);
    const product = findProduct(plan.def.productId)!;
    const arrowPath = join(dir, objectPath(plan.def.productId, plan.def.dataset, w.object));
    return {
      id: w.id,
      productId: plan.def.productId,
      dataset: plan.def.dataset,
      seriesKey: seriesKeyOf(plan),
      columns: w.columns,
      filters: product.filters.map((f) => f.param),
      floorDate: product.floor!,
      rows: w.rows,
      arrowPath,
      arrowBytes: w.bytes,
      csvPath: () => ensureCsv(arrowPath, join(dir, '.csv', `${plan.def.productId}__${plan.def.dataset}.csv`)),
      batches: () => readBatches(arrowPath),
    };
  });
  return {
    name: stamp.name,
    sourceDir: dir,
    keysPath: join(dir, 'keys.json'),
    apiKey: BENCH_API_KEY,
    adminKey: BENCH_ADMIN_KEY,
    datasets,
    totalRows: datasets.reduce((n, d) => n + d.rows, 0),
    totalArrowBytes: datasets.reduce((n, d) => n + d.arrowBytes, 0),
  };
}
