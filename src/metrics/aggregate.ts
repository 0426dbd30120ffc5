import { AggregatorRegistry, type Registry } from 'prom-client';

/** One registry's samples as plain data: what a serving thread posts to the main thread on a scrape. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * The Prometheus text of several registries' snapshots joined into one view: series with the
 * same name and labels are summed (every metric here declares aggregator 'sum'; per-thread
 * gauges carry a `thread` label, so they stay apart).
 */
export async function prometheusText(snapshots: readonly MetricsSnapshot[]): Promise<string> {
  return AggregatorRegistry.aggregate(snapshots as Parameters<typeof AggregatorRegistry.aggregate>[0]).metrics();
}
