/**
 * `npm run bench`: generates the data sets if needed, runs every workload against pitcache
 * (1 and 2 workers), the same handler over node:http, DuckDB and PostgreSQL, the scale points,
 * the S3 load and swap, and the micro-benchmarks; writes bench/RESULTS.md.
 *
 *   npm run bench -- [--quick] [--duration S] [--warmup S] [--connections N]
 *                    [--only pitcache,pitcache-2,pitcache-rows,node-http,duckdb,postgres]
 *                    [--skip scale,s3,micro,throughput,parity] [--cpu-prof] [--out FILE]
 *                    [--workloads walk-forward-series,repeated,...]
 *
 * Before DuckDB and PostgreSQL are timed, their answers are checked against the contract's
 * reference model (sections/sql-parity.ts; `--skip parity` to leave it out).
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Alternative } from './alternatives/types.js';
import type { PageFetcher } from './alternatives/duckdb-postgres-plan.js';
import { ceilingAlternative } from './alternatives/ceiling.js';
import { HttpServerAlternative } from './alternatives/http-server.js';
import { nodeHttpAlternative } from './alternatives/node-http.js';
import { cliHasWorkers, pitcacheAlternative, type PitcacheOptions } from './alternatives/pitcache.js';
import { ensureData } from './data/ensure-data.js';
import { planFor, SCALE_DATASET } from './data/plan.js';
import { canPin } from './lib/proc.js';
import { repoRoot } from './lib/paths.js';
import { machineInfo } from './report/machine.js';
import { renderMarkdown } from './report/markdown.js';
import type { BenchResults } from './report/model.js';
import { microQueries } from './micro/micro-queries.js';
import { runMicro } from './micro/hot-paths.js';
import { emptyServerMemory } from './sections/baseline.js';
import { runS3 } from './sections/s3.js';
import { checkSqlParity } from './sections/sql-parity.js';
import { runScale, summary } from './sections/scale.js';
import { runThroughput, type RunContext } from './sections/throughput.js';
import { ensureWrk } from './wrk/run-wrk.js';
import { WORKLOAD_TEXT, WORKLOADS, buildWorkloads } from './workloads.js';

const log = (m: string): void => void process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
/** The row arena of the pitcache-rows alternative: room for every row the walk-forward workloads touch. */
const LARGE_ROW_CACHE_MB = 1024;

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string', default: '64' },
      only: { type: 'string' },
      skip: { type: 'string', default: '' },
      workloads: { type: 'string' },
      'cpu-prof': { type: 'boolean', default: false },
      'data-dir': { type: 'string' },
      out: { type: 'string' },
      // Re-renders the markdown from the JSON of an earlier run (after changing the report code).
      'render-only': { type: 'boolean', default: false },
    },
  });
  const root = repoRoot();
  process.chdir(root);
  const quick = a.quick!;
  const picked: readonly string[] = a.workloads === undefined ? WORKLOADS : a.workloads.split(',').filter(Boolean);
  const unknown = picked.filter((w) => !(WORKLOADS as readonly string[]).includes(w));
  if (unknown.length > 0) throw new Error(`--workloads: unknown ${unknown.join(', ')} (known: ${WORKLOADS.join(', ')})`);
  const ctx: RunContext = {
    quick,
    connections: Number(a.connections),
    durationSec: Number(a.duration ?? (quick ? 2 : 30)),
    warmupSec: Number(a.warmup ?? (quick ? 1 : 5)),
    workloads: WORKLOADS.filter((w) => picked.includes(w)),
    log,
  };
  const skip = new Set(a.skip!.split(',').filter(Boolean));
  const only = a.only === undefined ? null : new Set(a.only.split(','));
  const dataRoot = resolve(a['data-dir'] ?? join(root, 'bench/.data'));
  const out = resolve(a.out ?? (quick ? join(dataRoot, 'RESULTS-quick.md') : join(root, 'bench/RESULTS.md')));
  const json = out.replace(/\.md$/, '') + '.json';
  // Sections written by hand after a run (follow-ups, the formats and walk-forward benches)
  // sit below KEPT_MARKER in RESULTS.md: a new run re-renders what is above and keeps them.
  const kept = await readFile(out, 'utf8').then(
    (text) => (text.includes(KEPT_MARKER) ? `\n${text.slice(text.indexOf(KEPT_MARKER))}` : ''),
    () => '',
  );
  if (a['render-only']) {
    await writeFile(out, renderMarkdown(JSON.parse(await readFile(json, 'utf8')) as BenchResults) + kept);
    log(`re-rendered ${relative(root, out)} from ${relative(root, json)}`);
    return;
  }
  const queryCount = quick ? 2000 : 20_000;

  const machine = machineInfo();
  machine.versions.wrk = ensureWrk(log);
  // Two CPUs: the server on CPU 0, wrk (and s3rver) on CPU 1, so neither steals the other's time.
  const pin = canPin() && machine.cores >= 2;
  const serverCpus = pin ? '0' : undefined;
  const otherCpus = pin ? String(machine.cores - 1) : undefined;
  const bothCpus = pin ? `0-${machine.cores - 1}` : undefined;
  const profDir = join(root, 'bench/.profiles');
  if (a['cpu-prof']) await mkdir(profDir, { recursive: true });
  const pitcache = (o: PitcacheOptions): ReturnType<typeof pitcacheAlternative> =>
    pitcacheAlternative({ ...o, ...(a['cpu-prof'] ? { nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profDir] } : {}) });

  const res: BenchResults = {
    startedAt: new Date().toISOString(),
    quick,
    command: `npm run bench --${process.argv.slice(2).length > 0 ? ' ' + process.argv.slice(2).join(' ') : ''}`.replace(/ --$/, ''),
    options: { ...a, durationSec: ctx.durationSec, warmupSec: ctx.warmupSec, dataRoot: relative(root, dataRoot) },
    machine,
    pinning: pin
      ? `servers pinned with \`taskset -c ${serverCpus}\`, wrk and s3rver with \`taskset -c ${otherCpus}\`; the 2-worker pitcache gets \`taskset -c ${bothCpus}\` and so shares CPU ${otherCpus} with wrk. DuckDB and PostgreSQL are not pinned.`
      : 'none (taskset missing or fewer than two CPUs)',
    data: [],
    workloads: [],
    connections: ctx.connections,
    durationSec: ctx.durationSec,
    warmupSec: ctx.warmupSec,
    alternatives: [],
    crossChecks: [],
    scale: [],
    notes: [],
  };
  const save = async (): Promise<void> => {
    res.finishedAt = new Date().toISOString();
    await mkdir(resolve(out, '..'), { recursive: true });
    await writeFile(json, JSON.stringify(res, null, 2) + '\n');
    await writeFile(out, renderMarkdown(res) + kept);
  };

  const main = await ensureData(dataRoot, 'main', quick, log);
  res.data.push(summary(main));
  const plan = planFor('main', quick);
  const workloads = buildWorkloads(plan, { count: queryCount, pageWalkCount: quick ? 100 : 1000 });
  for (const w of ctx.workloads) res.workloads.push({ name: w, text: WORKLOAD_TEXT[w], queries: workloads[w].length });

  const wrkSide = { ...(serverCpus === undefined ? {} : { serverCpus }), ...(otherCpus === undefined ? {} : { wrkCpus: otherCpus }) };
  if (!skip.has('throughput')) {
    res.emptyServer = await emptyServerMemory(() => pitcache({ workers: 1, ...wrkSide })).catch(() => null);
    const alts: { key: string; make: () => Promise<Alternative | string> }[] = [
      { key: 'pitcache', make: async () => pitcache({ workers: 1, ...wrkSide }) },
      {
        key: 'pitcache-2',
        make: async () =>
          cliHasWorkers()
            ? pitcache({ workers: 2, ...wrkSide, ...(bothCpus === undefined ? {} : { serverCpus: bothCpus }) })
            : 'this build of pitcache has no --workers',
      },
      // The default row arena (64 MiB) holds the rows of the small datasets' random dates, not
      // wssi_us/demand_shock's (~700k distinct rows, ~350 MB of slots): this one holds them all,
      // to show what random dates cost once every row is rendered (RESULTS.md names it).
      {
        key: 'pitcache-rows',
        make: async () =>
          pitcache({
            workers: 1,
            ...wrkSide,
            extraArgs: ['--row-cache-mb', String(LARGE_ROW_CACHE_MB)],
            name: `pitcache (uWS, 1 worker, --row-cache-mb ${LARGE_ROW_CACHE_MB})`,
          }),
      },
      { key: 'node-http', make: async () => nodeHttpAlternative(wrkSide) },
      { key: 'duckdb', make: () => optional('./alternatives/duckdb.js') },
      { key: 'postgres', make: () => optional('./alternatives/postgres.js') },
    ];
    const chosen: Alternative[] = [];
    /** pitcache alternatives -> the ceiling that matches them (workers, CPUs) */
    const ceilings = new Map<Alternative, (bytes: number) => ReturnType<typeof ceilingAlternative>>();
    for (const x of alts.filter((x) => only === null || only.has(x.key))) {
      const alt = await x.make();
      if (typeof alt === 'string') res.alternatives.push({ name: x.key, skipped: alt, runs: {} });
      else chosen.push(alt);
      if (typeof alt !== 'string' && x.key.startsWith('pitcache')) {
        const two = x.key === 'pitcache-2';
        const cpus = two ? bothCpus : serverCpus;
        ceilings.set(alt, (bytes) =>
          ceilingAlternative({
            bytes,
            workers: two ? 2 : 1,
            ...(cpus === undefined ? {} : { serverCpus: cpus }),
            ...(otherCpus === undefined ? {} : { wrkCpus: otherCpus }),
          }),
        );
      }
      // The SQL systems first prove they answer the contract's rows, on a fresh instance of their own.
      if (typeof alt !== 'string' && !skip.has('parity') && isPageFetcher(alt)) {
        const fresh = await x.make();
        if (typeof fresh !== 'string' && isPageFetcher(fresh)) res.notes.push(await checkSqlParity(fresh, log));
      }
    }
    if (chosen.some((x) => !(x instanceof HttpServerAlternative))) {
      // Written once and cached: the SQL systems' load times then start from the CSV, not from its creation.
      log('writing CSV side files for the SQL alternatives (once)');
      for (const ds of main.datasets) await ds.csvPath();
    }
    await runThroughput(ctx, (alt, bytes) => ceilings.get(alt)?.(bytes) ?? null, chosen, main, workloads, res, save);
  }
  if (!skip.has('scale')) await runScale(ctx, dataRoot, queryCount, () => pitcache({ workers: 1, ...wrkSide }), res, save);
  if (!skip.has('s3')) {
    await runS3(
      ctx,
      dataRoot,
      queryCount,
      pitcache,
      { ...(serverCpus === undefined ? {} : { serverCpus }), ...(otherCpus === undefined ? {} : { otherCpus }) },
      res,
    );
    await save();
  }
  if (!skip.has('micro')) {
    log('micro-benchmarks');
    const ds = main.datasets.find((d) => d.id === SCALE_DATASET)!;
    res.micro = await runMicro({ arrowPath: ds.arrowPath, dataset: ds.id, queries: microQueries(plan, ds.id), quick }).then(
      (r) => ({ ok: true as const, table: { ...r.table, dataset: ds.id }, results: r.results }),
      (e: unknown) => ({ ok: false as const, error: e instanceof Error ? e.message : String(e) }),
    );
  }
  if (a['cpu-prof']) res.notes.push(`CPU profiles of every pitcache server process are in ${relative(root, profDir)}/.`);
  await save();
  log(`wrote ${relative(root, out)} and ${relative(root, json)}`);
}

const KEPT_MARKER = '<!-- Written by hand below this line: npm run bench keeps it. -->';

/** An alternative module another engineer provides; its absence is a note, not a failure. */
function isPageFetcher(alt: Alternative): alt is Alternative & PageFetcher {
  return typeof (alt as Partial<PageFetcher>).fetchPage === 'function';
}

async function optional(spec: string): Promise<Alternative | string> {
  try {
    const mod = (await import(spec)) as { default?: () => Alternative };
    if (typeof mod.default !== 'function') return `${spec} has no default export creating an Alternative`;
    return mod.default();
  } catch (e) {
    return `${spec} could not be loaded: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`;
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});
