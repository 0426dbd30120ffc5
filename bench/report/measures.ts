/** Derived numbers shared by the report and the target checks. */
import type { RunResult, WorkloadName } from '../alternatives/types.js';
import type { AlternativeResults, BenchResults } from './model.js';

export function reqPerSec(r: RunResult): number {
  return r.seconds > 0 ? r.requests / r.seconds : NaN;
}

export function isPitcache(a: AlternativeResults): boolean {
  return a.name.startsWith('pitcache');
}

/** The best pitcache variant on a workload (most requests per second). */
export function bestPitcache(res: BenchResults, w: WorkloadName): { name: string; run: RunResult } | null {
  let best: { name: string; run: RunResult } | null = null;
  for (const a of res.alternatives.filter(isPitcache)) {
    const r = a.runs[w];
    if (r?.ok && (best === null || reqPerSec(r) > reqPerSec(best.run))) best = { name: a.name, run: r };
  }
  return best;
}
