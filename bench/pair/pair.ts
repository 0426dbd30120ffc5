/**
 * `npm run bench:pair`: two builds of pitcache over HTTP, paired. Both servers are up at
 * once on the same data (one worker each, pinned to CPU 0), and wrk (on CPU 1) drives them
 * in turn, one slice each per round, alternately first, for every workload. This VM's speed
 * moves by up to 2x between minutes, so a change is judged by these paired ratios (B/A of
 * the rounds' requests, median of the rounds' p99 ratios), never by two separate runs. Each
 * slice also reads the server's CPU seconds from /proc: CPU per request is the steadier
 * figure when other processes share the cores (they take minutes, not a request's CPU).
 * The command is main.ts.
 */
import { readFile } from 'node:fs/promises';
import { BENCH_API_KEY } from '../data/ensure-data.js';
import { noDrainArgs } from '../lib/cli-flags.js';
import { freePort, pinned, readCpuSeconds, spawnLogged, waitFor200, type Spawned } from '../lib/proc.js';
import { serveArgv } from '../lib/server-argv.js';
import { median } from '../lib/stats.js';
import { runWrk, type WrkResult } from '../wrk/run-wrk.js';

export interface PairOptions {
  /** the built CLIs of the two builds (main.js; a main.ts runs through tsx) */
  readonly cliA: string;
  readonly cliB: string;
  /** a source folder with its keys.json (the bench key) */
  readonly dataDir: string;
  /** workload name -> its paths file */
  readonly paths: Readonly<Record<string, string>>;
  readonly rounds: number;
  readonly durationSec: number;
  readonly warmupSec: number;
  /** more `serve` flags for both */
  readonly serveArgs?: readonly string[];
  readonly connections?: number;
  readonly log?: (m: string) => void;
}

export interface PairSide {
  readonly requests: number;
  readonly seconds: number;
  readonly p99Ms: number;
  readonly errors: number;
  /** wrk's count of each kind of error (connect, read, write, status, timeout, non2xx), to tell them apart */
  readonly errorKinds?: Readonly<Record<string, number>>;
  /** the server's CPU seconds (all threads) during the slice; NaN where /proc is missing */
  readonly cpuSeconds: number;
}

export interface PairResult {
  readonly workload: string;
  readonly rounds: ReadonlyArray<{ readonly a: PairSide; readonly b: PairSide }>;
  /** B's requests per second over A's, both summed over the rounds */
  readonly ratio: number;
  /** the median of the rounds' B/A p99 ratios */
  readonly p99Ratio: number;
  /** B's CPU seconds per request over A's, both summed over the rounds (below 1: B costs less) */
  readonly cpuRatio: number;
  /** each build's CPU microseconds per request over the rounds */
  readonly cpuUsPerRequest: { readonly a: number; readonly b: number };
}

const side = (r: WrkResult, cpuSeconds: number): PairSide => {
  const raw = r.raw as { errors: Record<string, number>; non2xx: number };
  const errorKinds = { ...raw.errors, non2xx: raw.non2xx };
  return { requests: r.requests, seconds: r.seconds, p99Ms: r.p99Ms, errors: r.errors, errorKinds, cpuSeconds };
};

/** paths of a workload each server answers before wrk runs */
const PRIMED_PATHS = 16;

/**
 * Asks the first paths of a workload once each and waits for each answer (200) before wrk
 * runs: what a cold server does at its first requests (code loaded and compiled on first
 * use, which took tens of seconds on a loaded machine) is done before any timed round, and
 * a path that fails is named here rather than counted among wrk's errors.
 */
async function prime(base: string, pathsFile: string): Promise<void> {
  const paths = (await readFile(pathsFile, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .slice(0, PRIMED_PATHS);
  for (const path of paths) {
    const res = await fetch(base + path, { headers: { 'x-api-key': BENCH_API_KEY } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${base}${path} answered ${res.status} before the rounds`);
  }
}

type Paired = Pick<PairResult, 'ratio' | 'p99Ratio' | 'cpuRatio' | 'cpuUsPerRequest'>;

/** B/A of the rates summed over the rounds (a slow round weighs by its requests), the median p99 ratio, and B/A of CPU per request. */
export function pairedRatios(rounds: ReadonlyArray<{ readonly a: PairSide; readonly b: PairSide }>): Paired {
  const sum = (k: 'a' | 'b', f: 'requests' | 'seconds' | 'cpuSeconds'): number => rounds.reduce((s, r) => s + r[k][f], 0);
  const rate = (k: 'a' | 'b'): number => sum(k, 'requests') / sum(k, 'seconds');
  const cpu = (k: 'a' | 'b'): number => (sum(k, 'cpuSeconds') / sum(k, 'requests')) * 1e6;
  return {
    ratio: rate('b') / rate('a'),
    p99Ratio: median(rounds.map((r) => r.b.p99Ms / r.a.p99Ms)),
    cpuRatio: cpu('b') / cpu('a'),
    cpuUsPerRequest: { a: cpu('a'), b: cpu('b') },
  };
}

/** wrk's slice against one server, with the CPU that server spent during it. */
async function measured(slice: () => Promise<WrkResult>, pid: number): Promise<PairSide> {
  const before = readCpuSeconds(pid) ?? NaN;
  const r = await slice();
  return side(r, (readCpuSeconds(pid) ?? NaN) - before);
}

async function startServer(cli: string, dataDir: string, serveArgs: readonly string[]): Promise<{ server: Spawned; base: string }> {
  const port = await freePort();
  const server = spawnLogged(pinned('0', serveArgv(cli, dataDir, port, ['--workers', '1', '--refresh-interval', '0', ...noDrainArgs(), ...serveArgs])));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${base}/readyz`, server, 300_000);
  } catch (e) {
    await server.stop();
    throw e;
  }
  return { server, base };
}

export async function runPair(o: PairOptions): Promise<PairResult[]> {
  const log = o.log ?? (() => {});
  const started: Spawned[] = [];
  try {
    const a = await startServer(o.cliA, o.dataDir, o.serveArgs ?? []);
    started.push(a.server);
    const b = await startServer(o.cliB, o.dataDir, o.serveArgs ?? []);
    started.push(b.server);
    const results: PairResult[] = [];
    for (const [workload, pathsFile] of Object.entries(o.paths)) {
      // page-walk follows each chain to its end, as `npm run bench` runs it
      const mode = workload === 'page-walk' ? 'walk' : 'list';
      const wrk = (base: string, pathsFile: string, durationSec: number): Promise<WrkResult> =>
        runWrk({ baseUrl: base, pathsFile, apiKey: BENCH_API_KEY, mode, connections: o.connections ?? 64, durationSec, cpus: '1' });
      await prime(a.base, pathsFile);
      await prime(b.base, pathsFile);
      await wrk(a.base, pathsFile, o.warmupSec);
      await wrk(b.base, pathsFile, o.warmupSec);
      const rounds: Array<{ a: PairSide; b: PairSide }> = [];
      for (let r = 0; r < o.rounds; r++) {
        // alternately first: neither build always runs on the machine's later minute
        const first = r % 2 === 0 ? a : b;
        const second = first === a ? b : a;
        const x = await measured(() => wrk(first.base, pathsFile, o.durationSec), first.server.pid);
        const y = await measured(() => wrk(second.base, pathsFile, o.durationSec), second.server.pid);
        rounds.push(first === a ? { a: x, b: y } : { a: y, b: x });
      }
      const result = { workload, rounds, ...pairedRatios(rounds) };
      log(
        `${workload}: B/A req/s ${result.ratio.toFixed(3)}, p99 ${result.p99Ratio.toFixed(3)}, CPU per request ${result.cpuRatio.toFixed(3)} ` +
          `(${result.cpuUsPerRequest.a.toFixed(0)} -> ${result.cpuUsPerRequest.b.toFixed(0)} µs; ${o.rounds} rounds of ${o.durationSec} s)`,
      );
      results.push(result);
    }
    return results;
  } finally {
    await Promise.all(started.map((s) => s.stop()));
  }
}
