import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { Generation } from '../generations/generation.js';
import type { GenerationBytes } from '../generations/generation-memory.js';
import type { RetainedGenerations } from '../generations/retained-generations.js';
import type { CheckReport, SnapshotLoader } from '../generations/snapshot-loader.js';

/** Bodies of the operational endpoints (admin keys only). Cold paths: JSON.stringify is fine. */
export interface AdminOps {
  refresh(): Promise<Uint8Array>;
  /** async: a serving thread asks the loading thread, which owns the loader */
  status(): Promise<Uint8Array>;
  /** GET /metrics: the Prometheus text of every thread, joined on the loading thread */
  metrics(): Promise<Uint8Array>;
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

export function createAdminOps(
  registry: DatasetRegistry,
  loader: SnapshotLoader,
  metricsText: () => Promise<string>,
  /** the memory budget's view; null = no retention block in /admin/status */
  retained: Pick<RetainedGenerations, 'stats' | 'bytesOf'> | null = null,
): AdminOps {
  // Without a budget (a bench's server): the table alone.
  const bytesOf = (g: Generation): GenerationBytes => retained?.bytesOf(g) ?? { table: g.table.byteSize, indexes: 0, total: g.table.byteSize };
  return {
    async metrics() {
      return Buffer.from(await metricsText());
    },
    async refresh() {
      const reports: CheckReport[] = await loader.refreshNow();
      return Buffer.from(
        JSON.stringify({
          changed: reports.filter((r) => r.outcome === 'loaded').map((r) => r.dataset),
          datasets: reports.map((r) => ({
            dataset: r.dataset,
            outcome: r.outcome,
            generation_before: r.generationBefore,
            generation_after: r.generationAfter,
            error: r.error,
          })),
        }),
      );
    },
    async status() {
      const r = retained?.stats() ?? null;
      const mem = process.memoryUsage();
      return Buffer.from(
        JSON.stringify({
          ready: registry.ready,
          catalog: catalogStatusBody(loader),
          process: { rss: mem.rss, heap_used: mem.heapUsed, external: mem.external },
          // Superseded generations under the one memory budget (--retain-memory, --cursor-idle).
          retention:
            r === null
              ? null
              : {
                  budget_bytes: r.budgetBytes,
                  held_bytes: r.heldBytes,
                  live_bytes: r.liveBytes,
                  cursor_idle_ms: r.cursorIdleMs,
                  generations: r.entries.map((e) => ({ dataset: e.dataset, generation: e.generation, bytes: e.bytes, last_used: iso(e.lastUsedMs) })),
                },
          datasets: registry.slots.map((s) => {
            const g = s.current;
            const bytes = g === null ? null : bytesOf(g);
            return {
              dataset: s.id,
              state: s.state,
              generation: g?.number ?? null,
              rows: g?.table.rows ?? null,
              keys: g?.table.keyCount ?? null,
              series: g?.table.seriesCount ?? null,
              // what the generation counts for in the budget: its table, and its bulk indexes on every serving thread
              bytes: bytes?.total ?? null,
              table_bytes: bytes?.table ?? null,
              index_bytes: bytes?.indexes ?? null,
              // a generation of many parts has no one sha256 (contract 14): each part has its own
              sha256: g?.manifest.format === 'pitcache-snapshot/1' ? g.manifest.sha256 : null,
              created_at: g?.manifest.created_at ?? null,
              loaded_at: iso(g?.loadedAtMs ?? null),
              load_ms: g === null ? null : Math.round(g.loadMs),
              last_check: iso(s.lastCheckMs),
              next_check: iso(loader.nextCheckMs(s)),
              consecutive_failures: loader.failures(s),
              last_error: s.lastError,
              retained_generations: s.retainedNumbers(),
            };
          }),
        }),
      );
    },
  };
}

/** The catalog in force and its last check (contract 13): an invalid catalog.json's reason shows here. */
function catalogStatusBody(loader: SnapshotLoader): object {
  const c = loader.catalogStatus();
  return { origin: c.origin, products: c.products, datasets: c.datasets, last_check: iso(c.lastCheckMs), last_error: c.lastError, rejected: c.rejected };
}
