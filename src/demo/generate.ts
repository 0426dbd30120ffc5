/**
 * Writes the demo data set: all nine named datasets as generation 1 of a local snapshot
 * source. Deterministic: the output depends only on the end date (no wall clock, no
 * Math.random), so the same call always writes the same bytes.
 */
import { PRODUCTS } from '../catalog/products.js';
import { buildArrowSnapshot } from '../snapshot/arrow-writer.js';
import type { SnapshotSpec } from '../snapshot/arrow-writer.js';
import { writeGeneration } from '../snapshot/write-generation.js';
import { formatDate, parseDate, parseRfc3339 } from '../time/instant.js';
import { LocalSource } from '../source/local-source.js';
import { buildDemoSnapshot } from './build-dataset.js';
import type { DemoTimeline } from './build-dataset.js';
import { DEMO_DATASETS } from './catalog.js';
import type { DemoDatasetDef } from './dataset-def.js';

export const DEMO_START_DATE = '2021-01-01';
export const DEMO_END_DATE = '2026-11-20';
/** Change it whenever a model changes: ensureDemoData regenerates folders stamped with another seed. */
export const DEMO_SEED = 'pitcache-demo-v1';

export interface DemoOptions {
  /** Last business date (YYYY-MM-DD); default 2026-11-20. */
  endDate?: string;
}

/** created_at of every demo manifest: late on the end date, after everything in the data. */
export function demoCreatedAt(endDate: string): string {
  return `${endDate}T23:30:00Z`;
}

export async function generateDemo(dir: string, opts?: DemoOptions): Promise<void> {
  const endDate = opts?.endDate ?? DEMO_END_DATE;
  const source = new LocalSource(dir);
  for (const def of DEMO_DATASETS) {
    const bytes = buildArrowSnapshot(demoSnapshotSpec(def, endDate), 'file');
    await writeGeneration(source, { productId: def.productId, dataset: def.dataset }, bytes, 1, demoCreatedAt(endDate));
  }
}

/** The snapshot of one demo dataset, before encoding (tests and benchmarks use it directly). */
export function demoSnapshotSpec(def: DemoDatasetDef, endDate: string = DEMO_END_DATE): SnapshotSpec {
  return buildDemoSnapshot(def, demoTimeline(def.productId, endDate));
}

export function demoTimeline(productId: string, endDate: string): DemoTimeline {
  const endDay = parseDate(endDate);
  if (endDay === null) throw new Error(`endDate must be YYYY-MM-DD, got ${JSON.stringify(endDate)}`);
  const product = PRODUCTS.find((p) => p.id === productId);
  if (product === undefined) throw new Error(`demo dataset of an unknown product: ${productId}`);
  const floorDay = parseDate(product.floor!)!;
  const lastFloor = Math.max(...PRODUCTS.map((p) => parseDate(p.floor!)!));
  // Before the floors there would be nothing live to revise: the demo would not show PIT at work.
  if (endDay <= lastFloor + 30) throw new Error(`endDate must be after ${formatDate(lastFloor + 30)}, got ${endDate}`);
  return {
    startDay: parseDate(DEMO_START_DATE)!,
    endDay,
    floorDay,
    cutoffUs: parseRfc3339(demoCreatedAt(endDate))!,
    seed: DEMO_SEED,
  };
}
