/** Derived numbers shared by the report and the target checks. */
import type { RunResult, WorkloadName } from '../alternatives/types.js';
import type { AlternativeResults, BenchResults, CeilingRun } from './model.js';
import { median } from '../lib/stats.js';

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

/**
 * pitcache against its ceiling: the share of the ceiling's req/s and the p99 ratio. From
 * the interleaved rounds when the run has them (requests over seconds on each side, summed
 * over the rounds; the median of the rounds' p99 ratios), else from pitcache's own run
 * `r` and the ceiling's (results of runs before the rounds existed).
 */
export function ceilingShare(r: RunResult, c: CeilingRun): { share: number; p99x: number; paired: number } {
  const rounds = c.paired ?? [];
  if (rounds.length === 0) return { share: reqPerSec(r) / reqPerSec(c), p99x: r.p99Ms / c.p99Ms, paired: 0 };
  const sum = (pick: (x: RunResult) => number, side: 'pitcache' | 'ceiling'): number => rounds.reduce((a, x) => a + pick(x[side]), 0);
  const rate = (side: 'pitcache' | 'ceiling'): number => sum((x) => x.requests, side) / sum((x) => x.seconds, side);
  return {
    share: rate('pitcache') / rate('ceiling'),
    p99x: median(rounds.map((x) => x.pitcache.p99Ms / x.ceiling.p99Ms)),
    paired: rounds.length,
  };
}

/**
 * The fastest ceiling any pitcache variant was measured against on a workload: a server that
 * reads nothing and answers a fixed body of the workload's mean size. Its req/s over an
 * alternative's is the most any server on this HTTP layer could be ahead of it in this run,
 * so a target above it is out of reach in that run whatever pitcache does. The bound is a
 * run's, not the box's: the alternatives' speed moves with this VM as much as pitcache's.
 */
export function fastestCeiling(res: BenchResults, w: WorkloadName): number | null {
  let best: number | null = null;
  // only pitcache variants are run against a ceiling
  for (const a of res.alternatives) {
    const c = a.ceilings?.[w];
    if (c?.ok === true && (best === null || reqPerSec(c) > best)) best = reqPerSec(c);
  }
  return best;
}
