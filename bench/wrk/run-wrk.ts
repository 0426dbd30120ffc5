/** Drives an HTTP server with wrk and bench/wrk/paths.lua; installs wrk when missing. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { RunResult } from '../alternatives/types.js';
import { pinned, spawnLogged } from '../lib/proc.js';

export interface WrkRun {
  readonly baseUrl: string;
  readonly pathsFile: string;
  readonly apiKey: string;
  readonly mode: 'list' | 'walk';
  readonly connections: number;
  readonly durationSec: number;
  /** CPUs for wrk (taskset -c), e.g. "1" */
  readonly cpus?: string;
  /** wrk threads in list mode (walk mode uses one per connection); default 1 */
  readonly threads?: number;
}

export interface WrkResult extends RunResult {
  readonly p90Ms: number;
  readonly maxMs: number;
  readonly chains: number;
  readonly raw: unknown;
}

interface WrkJson {
  requests: number;
  duration_us: number;
  bytes: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  max_us: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  rows: number;
  pages: number;
  chains: number;
  non2xx: number;
}

/** The Lua script: beside this file in the sources; dist has no .lua, so look in bench/ too. */
export function luaScript(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  for (const p of [join(here, 'paths.lua'), join(here, '../../../bench/wrk/paths.lua'), join(process.cwd(), 'bench/wrk/paths.lua')]) {
    if (existsSync(p)) return p;
  }
  throw new Error('bench/wrk/paths.lua not found');
}

export function wrkVersion(): string | null {
  const r = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
  if (r.error) return null;
  return /wrk\s+(\S+)/.exec(r.stdout + r.stderr)?.[1] ?? 'unknown';
}

/** wrk from the distribution's package when it is not installed (needs root and apt). */
export function ensureWrk(log: (m: string) => void): string {
  const v = wrkVersion();
  if (v !== null) return v;
  log('wrk not found: apt-get install -y wrk');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  const r = spawnSync('apt-get', ['install', '-y', '-qq', 'wrk'], { stdio: 'inherit', env });
  const after = wrkVersion();
  if (r.status !== 0 || after === null) throw new Error('could not install wrk (apt-get install wrk failed); install it and run again');
  return after;
}

export async function runWrk(o: WrkRun): Promise<WrkResult> {
  const threads = o.mode === 'walk' ? o.connections : (o.threads ?? 1);
  const argv = pinned(o.cpus, [
    'wrk',
    '-t',
    String(threads),
    '-c',
    String(o.connections),
    '-d',
    `${o.durationSec}s`,
    '--timeout',
    '30s',
    '-s',
    luaScript(),
    o.baseUrl,
    '--',
    o.pathsFile,
    o.apiKey,
    o.mode,
  ]);
  const proc = spawnLogged(argv);
  const code = await new Promise<number | null>((done) => proc.child.once('exit', (c) => done(c)));
  const line = proc
    .output()
    .split('\n')
    .find((l) => l.startsWith('BENCH_JSON '));
  if (code !== 0 || line === undefined) throw new Error(`wrk failed (exit ${code}):\n${proc.output().slice(-2000)}`);
  const j = JSON.parse(line.slice('BENCH_JSON '.length)) as WrkJson;
  const e = j.errors;
  return {
    requests: j.requests,
    seconds: j.duration_us / 1e6,
    p50Ms: j.p50_us / 1000,
    p90Ms: j.p90_us / 1000,
    p99Ms: j.p99_us / 1000,
    maxMs: j.max_us / 1000,
    rows: j.rows,
    // status = non-2xx/3xx as wrk counts them; the script also counts non-2xx itself.
    errors: e.connect + e.read + e.write + e.timeout + Math.max(e.status, j.non2xx),
    bytes: j.bytes,
    chains: j.chains,
    raw: j,
  };
}
