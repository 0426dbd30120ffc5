/**
 * `npm run bench:pair`: two builds of pitcache over HTTP, paired. Both servers are up at
 * once on the same data (one worker each, pinned to CPU 0), and wrk (on CPU 1) drives them
 * in turn, one slice each per round, alternately first, for every workload. This VM's speed
 * moves by up to 2x between minutes, so a change is judged by these paired ratios (B/A of
 * the rounds' requests, median of the rounds' p99 ratios), never by two separate runs.
 * The command is main.ts.
 */
import { BENCH_API_KEY } from '../data/ensure-data.js';
import { noDrainArgs } from '../lib/cli-flags.js';
import { freePort, pinned, spawnLogged, waitFor200, type Spawned } from '../lib/proc.js';
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
}

export interface PairResult {
  readonly workload: string;
  readonly rounds: ReadonlyArray<{ readonly a: PairSide; readonly b: PairSide }>;
  /** B's requests per second over A's, both summed over the rounds */
  readonly ratio: number;
  /** the median of the rounds' B/A p99 ratios */
  readonly p99Ratio: number;
}

const side = (r: WrkResult): PairSide => ({ requests: r.requests, seconds: r.seconds, p99Ms: r.p99Ms, errors: r.errors });

/** B/A of the rates summed over the rounds (a slow round weighs by its requests), and the median p99 ratio. */
export function pairedRatios(rounds: ReadonlyArray<{ readonly a: PairSide; readonly b: PairSide }>): { ratio: number; p99Ratio: number } {
  const rate = (k: 'a' | 'b'): number => rounds.reduce((s, r) => s + r[k].requests, 0) / rounds.reduce((s, r) => s + r[k].seconds, 0);
  return { ratio: rate('b') / rate('a'), p99Ratio: median(rounds.map((r) => r.b.p99Ms / r.a.p99Ms)) };
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
    const wrk = (base: string, pathsFile: string, durationSec: number): Promise<WrkResult> =>
      runWrk({ baseUrl: base, pathsFile, apiKey: BENCH_API_KEY, mode: 'list', connections: o.connections ?? 64, durationSec, cpus: '1' });
    const results: PairResult[] = [];
    for (const [workload, pathsFile] of Object.entries(o.paths)) {
      await wrk(a.base, pathsFile, o.warmupSec);
      await wrk(b.base, pathsFile, o.warmupSec);
      const rounds: Array<{ a: PairSide; b: PairSide }> = [];
      for (let r = 0; r < o.rounds; r++) {
        // alternately first: neither build always runs on the machine's later minute
        const first = r % 2 === 0 ? a : b;
        const second = first === a ? b : a;
        const x = side(await wrk(first.base, pathsFile, o.durationSec));
        const y = side(await wrk(second.base, pathsFile, o.durationSec));
        rounds.push(first === a ? { a: x, b: y } : { a: y, b: x });
      }
      const result = { workload, rounds, ...pairedRatios(rounds) };
      log(`${workload}: B/A req/s ${result.ratio.toFixed(3)}, p99 ${result.p99Ratio.toFixed(3)} (${o.rounds} rounds of ${o.durationSec} s)`);
      results.push(result);
    }
    return results;
  } finally {
    await Promise.all(started.map((s) => s.stop()));
  }
}
