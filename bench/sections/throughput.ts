/** Every alternative, every workload, on the main data set: throughput, latency, load, memory, answers. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Alternative, BenchData, BenchQuery, GcOverRun, RunResult, WorkloadName } from '../alternatives/types.js';
import { HttpServerAlternative } from '../alternatives/http-server.js';
import type { AlternativeResults, BenchResults, CeilingRun, Outcome, PairedRound } from '../report/model.js';
import { ceilingShare } from '../report/measures.js';
import { median } from '../lib/stats.js';
import { meanAnswerBytes } from './ceiling-size.js';
import { timeChains, type ChainPagesResult } from './chain-pages.js';
import { BULK_WORKLOADS, OTHER_FORMATS, inFormat, toPath } from '../workloads.js';

export interface RunContext {
  readonly quick: boolean;
  readonly connections: number;
  readonly durationSec: number;
  readonly warmupSec: number;
  /** the workloads the throughput section runs, in order (`--workloads`; default all of WORKLOADS) */
  readonly workloads: readonly WorkloadName[];
  readonly log: (m: string) => void;
}

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** The ceiling server for an alternative's answers of `bytes` (same workers and CPUs), or null when it has none. */
export type CeilingFor = (alt: Alternative, bytes: number) => HttpServerAlternative | null;

export async function runThroughput(
  ctx: RunContext,
  ceilingFor: CeilingFor,
  alternatives: readonly Alternative[],
  data: BenchData,
  workloads: Record<WorkloadName, BenchQuery[]>,
  res: BenchResults,
  /** called after every alternative, so a crash late in a long run keeps what was measured */
  save: () => Promise<void>,
): Promise<void> {
  const sample = ctx.quick ? 2 : 5;
  for (const alt of alternatives) {
    const out: AlternativeResults = { name: alt.name, runs: {} };
    res.alternatives.push(out);
    let avail: Awaited<ReturnType<Alternative['available']>>;
    try {
      avail = await alt.available();
    } catch (e) {
      avail = { ok: false, reason: errorText(e) };
    }
    if (!avail.ok) {
      out.skipped = avail.reason;
      ctx.log(`${alt.name}: skipped (${avail.reason})`);
      continue;
    }
    try {
      ctx.log(`${alt.name}: loading ${data.name} (${data.totalRows.toLocaleString('en-US')} rows)`);
      out.setup = await alt.setup(data);
      ctx.log(`${alt.name}: ready in ${out.setup.loadSeconds.toFixed(2)} s`);
      if (out.setup.version !== undefined && /duckdb|postgres/i.test(alt.name)) res.machine.versions[alt.name] = out.setup.version;
      if (alt instanceof HttpServerAlternative) out.loads = await alt.datasetLoads().catch(() => []);
      if (alt instanceof HttpServerAlternative && res.ceiling === undefined && alt.name.startsWith('pitcache')) {
        res.ceiling = await ceiling(alt, ctx).then(
          (r) => ({ ok: true as const, ...r }),
          (e: unknown) => ({ ok: false as const, error: errorText(e) }),
        );
      }
      await crossCheck(alt, ctx.workloads, workloads, sample, res);
      for (const w of ctx.workloads) {
        try {
          const r = await alt.run(w, workloads[w], { connections: ctx.connections, durationSec: ctx.durationSec, warmupSec: ctx.warmupSec });
          out.runs[w] = { ok: true, ...r };
          ctx.log(
            `${alt.name} ${w}: ${(r.requests / r.seconds).toFixed(0)} req/s, p50 ${r.p50Ms.toFixed(2)} ms, p99 ${r.p99Ms.toFixed(2)} ms, ${r.errors} errors`,
          );
          if (alt instanceof HttpServerAlternative) {
            const c = await ceilingRun(alt, ceilingFor, w, workloads[w], data, ctx);
            if (c !== null) (out.ceilings ??= {})[w] = c;
          }
          if (alt instanceof HttpServerAlternative && alt.name.startsWith('pitcache') && BULK_WORKLOADS.includes(w)) {
            await otherFormats(alt, ceilingFor, w, workloads[w], data, ctx, out);
          }
          if (alt instanceof HttpServerAlternative && alt.name.startsWith('pitcache') && w === 'page-walk') {
            out.chainPages = await chainPages(alt, workloads[w], data, ctx);
          }
        } catch (e) {
          out.runs[w] = { ok: false, error: errorText(e) };
          ctx.log(`${alt.name} ${w}: failed: ${errorText(e).split('\n')[0]}`);
        }
      }
      if (alt instanceof HttpServerAlternative) out.memoryAfterRuns = alt.memory();
    } catch (e) {
      out.skipped = `setup failed: ${errorText(e).split('\n')[0]}`;
      ctx.log(`${alt.name}: ${out.skipped}`);
    } finally {
      await alt.teardown().catch((e: unknown) => ctx.log(`${alt.name}: teardown failed: ${errorText(e)}`));
    }
    await save();
  }
}

/**
 * A bulk workload's queries again in CSV and in Arrow, each with its ceiling (a fixed body
 * of that format's mean answer, in the same interleaved rounds): rows decoded per second in
 * each format, beside the alternatives' one figure per workload.
 */
async function otherFormats(
  alt: HttpServerAlternative,
  ceilingFor: CeilingFor,
  w: WorkloadName,
  queries: readonly BenchQuery[],
  data: BenchData,
  ctx: RunContext,
  out: AlternativeResults,
): Promise<void> {
  const runs = ((out.formats ??= {})[w] ??= {});
  for (const format of OTHER_FORMATS) {
    const q = inFormat(queries, format);
    let run: Outcome<RunResult>;
    try {
      const r = await alt.run(w, q, { connections: ctx.connections, durationSec: ctx.durationSec, warmupSec: ctx.warmupSec });
      run = { ok: true, ...r };
      ctx.log(`${alt.name} ${w} ${format}: ${(r.rows / r.seconds).toFixed(0)} rows/s, p99 ${r.p99Ms.toFixed(2)} ms, ${r.errors} errors`);
    } catch (e) {
      run = { ok: false, error: errorText(e) };
      ctx.log(`${alt.name} ${w} ${format}: failed: ${errorText(e).split('\n')[0]}`);
    }
    runs[format] = { run, ceiling: run.ok ? await ceilingRun(alt, ceilingFor, w, q, data, ctx) : null };
  }
}

/** page-walk's first chains followed one page at a time in each format: last page ÷ median page. */
async function chainPages(
  alt: HttpServerAlternative,
  queries: readonly BenchQuery[],
  data: BenchData,
  ctx: RunContext,
): Promise<AlternativeResults['chainPages']> {
  try {
    const formats: ChainPagesResult[] = [];
    for (const format of ['json', ...OTHER_FORMATS]) {
      const r = await timeChains(alt.baseUrl, data.apiKey, queries, format, ctx.quick ? 5_000 : 60_000);
      formats.push(r);
      ctx.log(
        `${alt.name} page-walk chains ${format}: ${r.chains.length} chains, last page ÷ median page worst ${r.worstLastOverMedian?.toFixed(2)}, median ${r.medianLastOverMedian?.toFixed(2)}, p99 page ${r.p99PageMs.toFixed(1)} ms`,
      );
    }
    return { ok: true, formats };
  } catch (e) {
    return { ok: false, error: errorText(e) };
  }
}

/** The first queries of each workload, answered by this alternative; totals compared in the report. */
async function crossCheck(
  alt: Alternative,
  names: readonly WorkloadName[],
  workloads: Record<WorkloadName, BenchQuery[]>,
  n: number,
  res: BenchResults,
): Promise<void> {
  if (alt.totalRows === undefined) return;
  for (const w of names) {
    for (const q of workloads[w].slice(0, n)) {
      const path = toPath(q);
      let entry = res.crossChecks.find((c) => c.path === path);
      if (entry === undefined) res.crossChecks.push((entry = { workload: w, path, totals: {} }));
      try {
        entry.totals[alt.name] = await alt.totalRows(q);
      } catch (e) {
        entry.totals[alt.name] = `error: ${errorText(e).split('\n')[0]}`;
      }
    }
  }
}

/**
 * Rounds of the interleaved share, each a slice of pitcache and a slice of its ceiling: six
 * of 5 s in a 30-s run. With three of 10 s, one slow slice of pitcache (the VM's speed
 * moved by a quarter between consecutive slices in the run of 2026-11-27 18:24) weighed a
 * third of the share; shorter slices, alternated more often, follow the drift more closely.
 */
const PAIRED_ROUNDS = 6;

/**
 * The same workload against the ceiling server answering a fixed body of this
 * alternative's mean answer size (sampled from its own answers just now), interleaved
 * with the alternative itself: both servers up (only one is driven at a time, so they
 * never share the CPUs), then PAIRED_ROUNDS rounds of one slice each, back to back,
 * alternately first, the run's duration split over the rounds. The share is read off
 * these rounds (report/measures.ts): the alternative's own run and a ceiling run a minute
 * later would see a VM whose speed had moved by up to 2x in between.
 */
async function ceilingRun(
  alt: HttpServerAlternative,
  ceilingFor: CeilingFor,
  w: WorkloadName,
  queries: readonly BenchQuery[],
  data: BenchData,
  ctx: RunContext,
): Promise<Outcome<CeilingRun> | null> {
  let bodyBytes: number;
  try {
    bodyBytes = await meanAnswerBytes(alt.baseUrl, queries.map(toPath), { 'x-api-key': data.apiKey });
  } catch (e) {
    return { ok: false, error: errorText(e) };
  }
  const c = ceilingFor(alt, bodyBytes);
  if (c === null) return null;
  try {
    await c.setup(data);
    const slice = { connections: ctx.connections, durationSec: Math.max(1, Math.round(ctx.durationSec / PAIRED_ROUNDS)), warmupSec: 0 };
    // the ceiling's warm-up; pitcache is warm from its own run
    await c.run(w, queries, { ...slice, durationSec: ctx.warmupSec });
    // page-walk follows cursors (wrk's walk mode), which a fixed body has none of: its share
    // compares unlike requests anyway, and its seconds-long tails make every slice wait for
    // the last one's backlog; one ceiling run, as before the rounds, is enough there.
    if (w === 'page-walk') {
      const r = await c.run(w, queries, { ...slice, durationSec: ctx.durationSec });
      ctx.log(`  ceiling for ${w} (${bodyBytes} B): ${(r.requests / r.seconds).toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(2)} ms`);
      return { ok: true, ...r, bodyBytes };
    }
    const paired: PairedRound[] = [];
    for (let i = 0; i < PAIRED_ROUNDS; i++) {
      if (i % 2 === 0) {
        const pitcache = await alt.run(w, queries, slice);
        paired.push({ pitcache, ceiling: await c.run(w, queries, slice) });
      } else {
        const ceiling = await c.run(w, queries, slice);
        paired.push({ pitcache: await alt.run(w, queries, slice), ceiling });
      }
    }
    const r = { ...sumOfSlices(paired.map((x) => x.ceiling)), bodyBytes, paired };
    const { share, p99x } = ceilingShare(paired[0]!.pitcache, r);
    ctx.log(
      `  ceiling for ${w} (${bodyBytes} B): ${(r.requests / r.seconds).toFixed(0)} req/s, p99 ${r.p99Ms.toFixed(2)} ms; ` +
        `interleaved share ${(share * 100).toFixed(0)}%, p99 ${p99x.toFixed(2)}x`,
    );
    return { ok: true, ...r };
  } catch (e) {
    return { ok: false, error: errorText(e) };
  } finally {
    await c.teardown().catch(() => undefined);
  }
}

/** A run made of slices: counts summed (GC counters too, when every slice has them), latencies the slices' medians (their histograms are not kept). */
export function sumOfSlices(runs: readonly RunResult[]): RunResult {
  const total = (pick: (r: RunResult) => number): number => runs.reduce((a, r) => a + pick(r), 0);
  const summed: RunResult = {
    requests: total((r) => r.requests),
    seconds: total((r) => r.seconds),
    rows: total((r) => r.rows),
    errors: total((r) => r.errors),
    p50Ms: median(runs.map((r) => r.p50Ms)),
    p99Ms: median(runs.map((r) => r.p99Ms)),
  };
  if (runs.length === 0 || runs.some((r) => r.gc === undefined)) return summed;
  const gc = (pick: (g: GcOverRun) => number): number => runs.reduce((a, r) => a + pick(r.gc!), 0);
  return {
    ...summed,
    gc: {
      allocatedBytes: gc((g) => g.allocatedBytes),
      scavenges: gc((g) => g.scavenges),
      markCompacts: gc((g) => g.markCompacts),
      pauseMs: gc((g) => g.pauseMs),
      markCompactPauseMs: gc((g) => g.markCompactPauseMs),
    },
  };
}

/** wrk with the same script against GET /healthz: what the load generator and transport can do at most. */
async function ceiling(alt: HttpServerAlternative, ctx: RunContext): Promise<Awaited<ReturnType<HttpServerAlternative['wrk']>>> {
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-bench-ceiling-'));
  try {
    const file = join(dir, 'healthz.paths');
    await writeFile(file, '/healthz\n');
    return await alt.wrk(file, 'list', ctx.connections, ctx.durationSec);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
