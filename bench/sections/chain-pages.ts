import type { BenchQuery } from '../alternatives/types.js';
import { median } from '../lib/stats.js';
import { toPath } from '../workloads.js';

/** One cursor chain followed page by page, alone on the connection: each page's time. */
export interface ChainPages {
  readonly path: string;
  readonly pages: number;
  readonly rows: number;
  readonly medianPageMs: number;
  readonly lastPageMs: number;
  /** lastPageMs / medianPageMs: the "last page no slower than twice its median page" */
  readonly lastOverMedian: number;
  readonly maxPageMs: number;
  /** the chain was cut at the page budget: no last page measured */
  readonly cut: boolean;
}

export interface ChainPagesResult {
  readonly format: string;
  readonly chains: readonly ChainPages[];
  /** over the chains that ended: the worst and the median last page ÷ median page */
  readonly worstLastOverMedian: number | null;
  readonly medianLastOverMedian: number | null;
  /** p99 of every page time of every chain */
  readonly p99PageMs: number;
}

const PAGE_BUDGET = 2000;

/**
 * The page-walk workload's cursor chains followed one at a time, one request in flight,
 * timing every page (wrk's 64 connections mix pages of every position, so they do not show
 * what the last page of a chain costs against its others). The first chains of the seeded
 * workload, as many as fit in `budgetMs` (a chain started is followed to its end, or to
 * PAGE_BUDGET pages).
 */
export async function timeChains(baseUrl: string, apiKey: string, queries: readonly BenchQuery[], format: string, budgetMs: number): Promise<ChainPagesResult> {
  const chains: ChainPages[] = [];
  const all: number[] = [];
  const start = performance.now();
  for (const q of queries) {
    if (performance.now() - start > budgetMs) break;
    const base = toPath({ ...q, params: { ...q.params, format } });
    const times: number[] = [];
    let rows = 0;
    let cursor: string | null = null;
    let cut = false;
    for (;;) {
      if (times.length >= PAGE_BUDGET) {
        cut = true;
        break;
      }
      const url = baseUrl + base + (cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`);
      const t0 = performance.now();
      const r = await fetch(url, { headers: { 'x-api-key': apiKey, 'accept-encoding': 'identity' } });
      await r.arrayBuffer();
      times.push(performance.now() - t0);
      if (r.status !== 200) throw new Error(`${url}: ${r.status}`);
      rows += Number(r.headers.get('x-count') ?? 0);
      cursor = r.headers.get('x-next-cursor');
      if (cursor === null || cursor === '') break;
    }
    all.push(...times);
    const med = median(times);
    const last = times[times.length - 1]!;
    chains.push({ path: base, pages: times.length, rows, medianPageMs: med, lastPageMs: last, lastOverMedian: last / med, maxPageMs: Math.max(...times), cut });
  }
  const ended = chains.filter((c) => !c.cut && c.pages > 1).map((c) => c.lastOverMedian);
  all.sort((a, b) => a - b);
  return {
    format,
    chains,
    worstLastOverMedian: ended.length === 0 ? null : Math.max(...ended),
    medianLastOverMedian: ended.length === 0 ? null : median(ended),
    p99PageMs: all.length === 0 ? 0 : all[Math.min(all.length - 1, Math.floor(all.length * 0.99))]!,
  };
}
