/** The targets of issue "Measured speed", checked against one run's results. */
import type { BenchResults } from './model.js';
import type { WorkloadName } from '../alternatives/types.js';
import { bestPitcache, ceilingShare, fastestCeiling, isPitcache, reqPerSec } from './measures.js';

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  /** null: could not be measured in this run */
  readonly met: boolean | null;
}

const MAIN = 'walk-forward-series' as const;

/** The alternatives that ratio targets name, by how the bench names their results. */
const ALTERNATIVES = { DuckDB: /duckdb/i, PostgreSQL: /postgres/i } as const;

function workersOf(name: string): number {
  return Number(/(\d+) workers?/.exec(name)?.[1] ?? 1);
}

/**
 * The best pitcache's req/s over an alternative's on one workload, with the bound the run puts
 * on it: the fastest ceiling's req/s over the alternative's. When that bound is below the
 * factor, the target is out of reach in that run whatever pitcache does, and the row says so;
 * otherwise it says what share of the ceiling the target asks for.
 */
function versusAlternative(res: BenchResults, w: WorkloadName, label: keyof typeof ALTERNATIVES, factor: number): TargetCheck {
  const best = bestPitcache(res, w);
  const alt = res.alternatives.find((a) => ALTERNATIVES[label].test(a.name));
  const run = alt?.runs[w];
  const target = `${w === MAIN ? 'walk-forward' : w} >= ${factor}x ${label} (req/s, same queries, same run)`;
  if (run?.ok !== true || best === null) return { target, measured: `not measured${alt?.skipped ? ` (${alt.skipped})` : ''}`, met: null };
  const altRps = reqPerSec(run);
  const x = reqPerSec(best.run) / altRps;
  const ceiling = fastestCeiling(res, w);
  const bound =
    ceiling === null
      ? ''
      : `; the ceiling itself (${Math.round(ceiling).toLocaleString('en-US')} req/s) is ${(ceiling / altRps).toFixed(1)}x` +
        (ceiling / altRps < factor ? ': out of reach in this run' : `: it needs ${((factor * altRps * 100) / ceiling).toFixed(0)}% of the ceiling`);
  return { target, measured: `${x.toFixed(1)}x (${best.name})${bound}`, met: x >= factor };
}

export function evaluateTargets(res: BenchResults): { checks: TargetCheck[]; markdown: string[] } {
  const checks: TargetCheck[] = [];
  const best = bestPitcache(res, MAIN);
  const bestRps = best === null ? NaN : reqPerSec(best.run);

  checks.push({
    target: `walk-forward >= 40,000 req/s with p99 < 5 ms at ${res.connections} connections`,
    measured: best === null ? 'not measured' : `${Math.round(bestRps).toLocaleString('en-US')} req/s, p99 ${best.run.p99Ms.toFixed(2)} ms (${best.name})`,
    met: best === null ? null : bestRps >= 40_000 && best.run.p99Ms < 5,
  });

  // The older target (walk-forward, 200x DuckDB and 20x PostgreSQL), then issue 11's: 200x
  // DuckDB and 10x PostgreSQL on each of its workloads.
  const versus: Array<readonly [WorkloadName, keyof typeof ALTERNATIVES, number]> = [
    [MAIN, 'DuckDB', 200],
    [MAIN, 'PostgreSQL', 20],
    ['walk-forward-loop', 'DuckDB', 200],
    ['repeated', 'DuckDB', 200],
    [MAIN, 'PostgreSQL', 10],
    ['walk-forward-loop', 'PostgreSQL', 10],
    ['repeated', 'PostgreSQL', 10],
  ];
  for (const [w, label, factor] of versus) checks.push(versusAlternative(res, w, label, factor));

  // Issue 11: each pitcache workload against its own ceiling (same run, same workers, same
  // script). Every pitcache variant is its own candidate, judged by its share in the
  // interleaved rounds: picking the variant by its separate run's req/s (as for DuckDB
  // above) would pick by the VM's drift. The first one shown meets the target, or comes
  // closest; the others follow, so none is hidden.
  for (const [w, share, p99x] of [
    ['walk-forward-series', 0.6, 2],
    ['walk-forward-loop', 0.8, null],
    ['repeated', 0.9, null],
  ] as const) {
    const label = `${w} >= ${share * 100}% of the uWS ceiling's req/s${p99x === null ? '' : ` with p99 <= ${p99x}x the ceiling's`}`;
    const candidates = res.alternatives.filter(isPitcache).flatMap((a) => {
      const r = a.runs[w];
      const c = a.ceilings?.[w];
      if (r?.ok !== true || c?.ok !== true) return [];
      const got = ceilingShare(r, c);
      return [{ name: a.name, c, ...got, meets: got.share >= share && (p99x === null || got.p99x <= p99x) }];
    });
    if (candidates.length === 0) {
      checks.push({ target: label, measured: 'not measured', met: null });
      continue;
    }
    candidates.sort((x, y) => Number(y.meets) - Number(x.meets) || y.share - x.share);
    const [b, ...rest] = candidates as [(typeof candidates)[number], ...typeof candidates];
    const one = (x: (typeof candidates)[number]): string => `${(x.share * 100).toFixed(0)}%, p99 ${x.p99x.toFixed(2)}x`;
    checks.push({
      target: label,
      measured:
        `${one(b)} (${b.name}; ceiling ${Math.round(reqPerSec(b.c)).toLocaleString('en-US')} req/s, ${b.c.bodyBytes} B` +
        `${b.paired > 0 ? `, ${b.paired} interleaved rounds` : ''})` +
        (rest.length === 0 ? '' : `; ${rest.map((x) => `${one(x)} (${x.name})`).join('; ')}`),
      met: b.meets,
    });
  }

  const small = res.scale.find((p) => p.name.endsWith('1m'));
  const large = res.scale.find((p) => p.name.endsWith('50m'));
  if (small?.result.ok && large?.result.ok) {
    const x = large.result.run.p99Ms / small.result.run.p99Ms;
    const x50 = large.result.run.p50Ms / small.result.run.p50Ms;
    checks.push({ target: 'walk-forward latency at 50M rows within 1.5x of 1M', measured: `p99 ${x.toFixed(2)}x, p50 ${x50.toFixed(2)}x`, met: x <= 1.5 });
  } else {
    const why = !large?.result.ok && large !== undefined ? `50M point failed: ${(large.result as { error: string }).error.split('\n')[0]}` : 'not measured';
    checks.push({ target: 'walk-forward latency at 50M rows within 1.5x of 1M', measured: why, met: large === undefined ? null : false });
  }

  const loaded = res.alternatives.filter((a) => isPitcache(a) && a.setup !== undefined);
  const p1 = loaded[0];
  // Loading builds datasets on one thread per CPU, so the load target is read off the server
  // that may use every CPU (the most workers: the runner pins 1-worker servers to CPU 0).
  const wide = loaded.reduce<(typeof loaded)[number] | undefined>(
    (best, a) => (best === undefined || workersOf(a.name) > workersOf(best.name) ? a : best),
    undefined,
  );
  const data = res.data[0];
  if (p1?.setup !== undefined && wide?.setup !== undefined && data !== undefined) {
    const rps = data.rows / wide.setup.loadSeconds;
    const others = loaded.filter((a) => a !== wide).map((a) => `${a.name}: ${a.setup!.loadSeconds.toFixed(2)} s`);
    checks.push({
      target: 'load >= 3M rows/s (Arrow bytes to serving)',
      measured:
        `${(rps / 1e6).toFixed(2)}M rows/s (${wide.name}, both CPUs, ${wide.setup.loadSeconds.toFixed(2)} s for ${data.rows.toLocaleString('en-US')} rows)` +
        (others.length > 0 ? `; pinned to one CPU: ${others.join(', ')}` : ''),
      met: rps >= 3e6,
    });
    const rss = p1.setup.rssBytes;
    const after = p1.memoryAfterRuns?.rss;
    checks.push({
      target: 'RSS <= 1.5x the Arrow files',
      measured:
        rss === undefined
          ? 'not measured'
          : `${(rss / data.arrowBytes).toFixed(2)}x after load${after === undefined ? '' : `, ${(after / data.arrowBytes).toFixed(2)}x after the runs`}, peak ${((p1.setup.peakRssBytes ?? NaN) / data.arrowBytes).toFixed(2)}x` +
            (res.emptyServer ? `; ${((rss - res.emptyServer.rss) / data.arrowBytes).toFixed(2)}x above an empty server` : ''),
      met: rss === undefined ? null : rss <= 1.5 * data.arrowBytes,
    });
  }

  const md: string[] = ['## Targets', ''];
  if (res.quick) md.push('> Quick mode: the targets are stated for the full data sets; these verdicts only show the harness works.', '');
  md.push('| target | measured | met |', '|---|---|---|');
  for (const c of checks) md.push(`| ${c.target} | ${c.measured} | ${c.met === null ? 'not measured' : c.met ? 'yes' : '**no**'} |`);
  md.push('');
  // The analysis of a miss is written by hand from a profile, below the kept marker, so that
  // a new run (which re-renders everything above it) does not wipe it.
  if (checks.some((x) => x.met === false))
    md.push(
      'Why each missed target is missed, with the profile it comes from: [Why the targets are missed](#why-the-targets-are-missed), below. `npm run bench -- --cpu-prof` writes `.cpuprofile` files of the pitcache servers to `bench/.profiles/`.',
      '',
    );
  return { checks, markdown: md };
}
