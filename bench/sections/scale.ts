/** Walk-forward latency of pitcache (1 worker) at each scale point: the cost must not grow with the table. */
import type { BenchData } from '../alternatives/types.js';
import type { HttpServerAlternative } from '../alternatives/http-server.js';
import { SCALE_SETS, planFor } from '../data/plan.js';
import { ensureData } from '../data/ensure-data.js';
import type { BenchResults } from '../report/model.js';
import { buildWorkloads } from '../workloads.js';
import type { RunContext } from './throughput.js';

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

export async function runScale(
  ctx: RunContext,
  dataRoot: string,
  queryCount: number,
  makePitcache: () => HttpServerAlternative,
  res: BenchResults,
  save: () => Promise<void>,
): Promise<void> {
  for (const name of SCALE_SETS) {
    const data = await ensureData(dataRoot, name, ctx.quick, ctx.log);
    res.data.push(summary(data));
    const queries = buildWorkloads(planFor(name, ctx.quick), { count: queryCount, pageWalkCount: 1 })['walk-forward-series'];
    const alt = makePitcache();
    const point: BenchResults['scale'][number] = { name, rows: data.totalRows, arrowBytes: data.totalArrowBytes, result: { ok: false, error: 'not run' } };
    res.scale.push(point);
    try {
      ctx.log(`scale ${name}: loading ${data.totalRows.toLocaleString('en-US')} rows`);
      const setup = await alt.setup(data);
      await requireLoaded(alt, data);
      const memory = alt.memory();
      const run = await alt.run('walk-forward-series', queries, { connections: ctx.connections, durationSec: ctx.durationSec, warmupSec: ctx.warmupSec });
      point.result = { ok: true, loadSeconds: setup.loadSeconds, memory, run };
      ctx.log(
        `scale ${name}: load ${setup.loadSeconds.toFixed(2)} s, ${(run.requests / run.seconds).toFixed(0)} req/s, p50 ${run.p50Ms.toFixed(2)} ms, p99 ${run.p99Ms.toFixed(2)} ms`,
      );
    } catch (e) {
      point.result = { ok: false, error: errorText(e) };
      ctx.log(`scale ${name}: failed: ${errorText(e).split('\n')[0]}`);
    } finally {
      await alt.teardown();
    }
    await save();
  }
}

/** /readyz is 200 once every dataset was tried; a refused one must fail the point, not look fast. */
export async function requireLoaded(alt: HttpServerAlternative, data: BenchData): Promise<void> {
  const r = await fetch(`${alt.baseUrl}/admin/status`, { headers: { 'x-api-key': data.adminKey } });
  const j = (await r.json()) as { datasets: { dataset: string; state: string; last_error: string | null }[] };
  for (const d of data.datasets) {
    const s = j.datasets.find((x) => x.dataset === d.id);
    if (s?.state !== 'loaded') throw new Error(`${d.id} is not loaded (${s?.state ?? 'absent'}): ${s?.last_error ?? ''}`);
  }
}

export function summary(data: BenchData): BenchResults['data'][number] {
  return {
    name: data.name,
    sourceDir: data.sourceDir,
    rows: data.totalRows,
    arrowBytes: data.totalArrowBytes,
    datasets: data.datasets.map((d) => ({ id: d.id, rows: d.rows, bytes: d.arrowBytes })),
  };
}
