import { Registry, type Metric } from 'prom-client';
import { OPS_ERROR_CODES, type OpsErrorCode } from '../ops-errors.js';
import type { DatasetRegistry } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';
import type { Generation } from './generation.js';
import type { GenerationBytes } from './generation-memory.js';
import type { RetentionStats } from './retained-generations.js';
import type { CheckListener } from './snapshot-loader.js';
import { counter, gauge, type CustomMetric, type Sample } from '../metrics/custom-metric.js';

/**
 * What the loading thread knows of each dataset it serves: the generation, rows and bytes
 * in service, how long the last load took and when the source last answered well, and
 * the source's failures by kind (the stable codes of ops-errors.ts). Gauges are read from
 * the slots when scraped; the loader reports each settled check (CheckListener).
 */
export class DatasetMetrics implements CheckListener {
  /** per dataset id (the datasets of the catalog in force, as they come and go): the last successful check (ms; NaN = never) and failures by code */
  private readonly perDataset = new Map<string, { lastSuccessMs: number; readonly errors: Float64Array }>();
  /** catalog.json files refused (contract 13), by nothing: one counter */
  private catalogRejections = 0;

  constructor(
    private readonly datasets: DatasetRegistry,
    /** the superseded generations kept under the memory budget; absent = no such gauges */
    private readonly retention?: () => RetentionStats,
    /** what a generation counts for (retained-generations.ts); absent: its table alone */
    private readonly bytesOf: (g: Generation) => GenerationBytes = (g) => ({ table: g.table.byteSize, indexes: 0, total: g.table.byteSize }),
  ) {}

  private of(slot: DatasetSlot): { lastSuccessMs: number; readonly errors: Float64Array } {
    let d = this.perDataset.get(slot.id);
    if (d === undefined) this.perDataset.set(slot.id, (d = { lastSuccessMs: NaN, errors: new Float64Array(OPS_ERROR_CODES.length) }));
    return d;
  }

  succeeded(slot: DatasetSlot, atMs: number): void {
    this.of(slot).lastSuccessMs = atMs;
  }

  failed(slot: DatasetSlot, code: OpsErrorCode): void {
    this.of(slot).errors[OPS_ERROR_CODES.indexOf(code)]! += 1;
  }

  /** An invalid catalog.json was refused (the catalog in force stays). */
  catalogRejected(): void {
    this.catalogRejections++;
  }

  registry(): Registry {
    const r = new Registry();
    for (const m of this.collectors()) r.registerMetric(m as unknown as Metric);
    return r;
  }

  private collectors(): CustomMetric[] {
    const slots = (): readonly DatasetSlot[] => this.datasets.slots;
    /** One sample per dataset that has a generation in service. */
    const perGeneration = (read: (g: NonNullable<DatasetSlot['current']>) => number) => (): Sample[] =>
      slots().flatMap((s) => (s.current === null ? [] : [{ labels: { dataset: s.id }, value: read(s.current) }]));
    const retention = this.retention;
    const retained: CustomMetric[] =
      retention === undefined
        ? []
        : [
            gauge('pitcache_retained_generations', 'Superseded generations kept in memory for cursors and generation=N, all datasets.', () => [
              { labels: {}, value: retention().entries.length },
            ]),
            gauge('pitcache_retained_bytes', 'Bytes held by the superseded generations kept in memory, all datasets.', () => [
              { labels: {}, value: retention().heldBytes },
            ]),
            gauge('pitcache_retained_budget_bytes', 'The memory budget for superseded generations (--retain-memory) in bytes.', () => [
              { labels: {}, value: retention().budgetBytes },
            ]),
          ];
    return [
      ...retained,
      gauge('pitcache_dataset_loaded', 'Whether a generation of the dataset is in service (1) or not (0).', () =>
        slots().map((s) => ({ labels: { dataset: s.id }, value: s.current === null ? 0 : 1 })),
      ),
      gauge(
        'pitcache_dataset_generation',
        'Generation number in service per dataset.',
        perGeneration((g) => g.number),
      ),
      gauge(
        'pitcache_dataset_rows',
        'Rows of the generation in service per dataset.',
        perGeneration((g) => g.table.rows),
      ),
      gauge(
        'pitcache_dataset_bytes',
        'Bytes of memory the generation in service counts for per dataset (in the --retain-memory budget once superseded): its table, and the indexes of bulk answers on every serving thread.',
        perGeneration((g) => this.bytesOf(g).total),
      ),
      gauge(
        'pitcache_dataset_index_bytes',
        'Of pitcache_dataset_bytes: the indexes of bulk answers (the (date, series) order and the per-series suffix minimum), as every serving thread holds them once built.',
        perGeneration((g) => this.bytesOf(g).indexes),
      ),
      gauge(
        'pitcache_dataset_load_duration_seconds',
        'Time the generation in service took to fetch, check, decode and index.',
        perGeneration((g) => g.loadMs / 1000),
      ),
      gauge(
        'pitcache_dataset_loaded_timestamp_seconds',
        'When the generation in service was loaded (Unix time).',
        perGeneration((g) => g.loadedAtMs / 1000),
      ),
      gauge(
        'pitcache_dataset_last_success_timestamp_seconds',
        'When a check of the dataset at the source last succeeded, loaded or unchanged (Unix time).',
        () =>
          slots().flatMap((s) => {
            const ms = this.perDataset.get(s.id)?.lastSuccessMs ?? NaN;
            return Number.isNaN(ms) ? [] : [{ labels: { dataset: s.id }, value: ms / 1000 }];
          }),
      ),
      counter(
        'pitcache_source_errors_total',
        'Failed checks or loads of a dataset by kind (source_unreachable, manifest_missing, checksum_mismatch...).',
        () => {
          const values: Sample[] = [];
          for (const [id, d] of this.perDataset)
            for (let c = 0; c < OPS_ERROR_CODES.length; c++) {
              const v = d.errors[c]!;
              if (v > 0) values.push({ labels: { dataset: id, kind: OPS_ERROR_CODES[c]! }, value: v });
            }
          return values;
        },
      ),
      counter('pitcache_catalog_rejected_total', 'catalog.json files refused as invalid (contract 13); the catalog in force stayed.', () => [
        { labels: {}, value: this.catalogRejections },
      ]),
      gauge('pitcache_catalog_datasets', 'Datasets of the catalog in force that this replica serves.', () => [
        { labels: {}, value: this.datasets.slots.length },
      ]),
    ];
  }
}
