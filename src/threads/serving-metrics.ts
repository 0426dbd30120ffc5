import type { Metric, Registry } from 'prom-client';
import type { MetricsSnapshot } from '../metrics/aggregate.js';
import { GcMetrics } from '../metrics/gc-metrics.js';
import { RequestMetrics } from '../metrics/request-metrics.js';
import type { ApiHandler } from '../api/api-handler.js';

/**
 * The metrics of one serving thread: its request counters (fed by its API handler), its
 * caches' own totals, read into them when scraped, and its garbage collection. A scrape takes a snapshot of each
 * serving thread and joins them on the loading thread (aggregate.ts).
 */
export class ServingMetrics {
  readonly requests: RequestMetrics;
  readonly gc: GcMetrics;
  private readonly registry: Registry;
  private handler: ApiHandler | null = null;

  constructor(datasetIds: readonly string[], thread: string) {
    this.requests = new RequestMetrics(datasetIds, thread);
    this.gc = new GcMetrics(thread);
    this.registry = this.requests.registry();
    for (const m of this.gc.collectors()) this.registry.registerMetric(m as unknown as Metric);
  }

  /** The handler whose caches are reported (it is built with `requests`, so it comes after). */
  attach(handler: ApiHandler): void {
    this.handler = handler;
  }

  async snapshot(): Promise<MetricsSnapshot> {
    const stats = this.handler?.cacheStats();
    if (stats?.response) this.requests.setCacheTotals('response', stats.response);
    if (stats?.rows) this.requests.setCacheTotals('row', stats.rows);
    if (stats?.rows?.pages) this.requests.setCacheTotals('page', stats.rows.pages);
    return this.registry.getMetricsAsJSON();
  }

  close(): void {
    this.requests.close();
    this.gc.close();
  }
}
