/** One query of each workload for the dataset the micro-benchmarks use (from the same seeded lists). */
import type { BenchQuery, WorkloadName } from '../alternatives/types.js';
import type { DataSetPlan } from '../data/plan.js';
import { buildWorkloads } from '../workloads.js';

export function microQueries(plan: DataSetPlan, dataset: string): Record<string, BenchQuery> {
  const w = buildWorkloads(plan, { count: 500, pageWalkCount: 200 });
  const first = (name: WorkloadName): BenchQuery => {
    const q = w[name].find((x) => x.dataset === dataset);
    if (q === undefined) throw new Error(`no ${name} query for ${dataset}`);
    return q;
  };
  return {
    'walk-forward one series': first('walk-forward-series'),
    'walk-forward all series': first('walk-forward-dataset'),
    latest: first('latest'),
    'history page': first('page-walk'),
  };
}
