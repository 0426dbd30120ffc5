/**
 * Issue 10's report figures: pitcache through HAProxy (the shipped
 * deploy/haproxy/haproxy.cfg) with 1, 2 and 3 replicas of `--workers 1` on this box, the
 * uWS static-body ceiling in the same run (direct, and behind the same HAProxy), and the
 * cost of a cross-replica cursor that must load its generation (contract 12).
 *
 * Workload: single-series backtest windows on the demo pemi/grid_stress
 * (`bidding_zone=Z&date_from=D-90&date_to=D&as_of=D`, 2,000 seeded queries), JSON, the
 * response cache off so every request is computed; wrk, 32 connections, one thread.
 *
 *   npm run bench:cluster [-- --seconds 10]
 */
import { spawnSync } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { tableFromIPC, tableToIPC } from 'apache-arrow';
import { DEMO_KEY, ensureDemoData } from '../../src/demo/ensure-demo.js';
import { Rng } from '../../src/demo/prng.js';
import { silentLogger } from '../../src/log/logger.js';
import { Children, exitOf, tail } from '../../scripts/cluster/children.js';
import { filledConfig, shippedConfig, SHIPPED_FILE } from '../../scripts/cluster/haproxy-config.js';
import { Haproxy, haproxyVersion } from '../../scripts/cluster/haproxy.js';
import { Replica } from '../../scripts/cluster/replica.js';
import { cliPath, repoRoot } from '../lib/paths.js';
import { ceilingArgv } from '../lib/server-argv.js';
import { freePort, waitAnswering } from '../lib/proc.js';
import { meanAnswerBytes } from '../sections/ceiling-size.js';
import { ensureWrk, runWrk, type WrkResult } from '../wrk/run-wrk.js';
import { cursorLoadCost, type CursorLoadResult } from './cursor-load.js';
import { median } from '../lib/stats.js';

const log = (m: string): void => void process.stderr.write(`[cluster ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const CONNECTIONS = 32;
/** Published by the bench, so each has its history/ manifest (the demo's own generation 1 predates contract 12). */
const EXTRA_GENERATIONS = 4;

interface Point {
  readonly name: string;
  readonly via: string;
  readonly reqPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly errors: number;
  readonly requests: number;
}

const point = (name: string, via: string, r: WrkResult): Point => ({
  name,
  via,
  reqPerSec: r.requests / r.seconds,
  p50Ms: r.p50Ms,
  p99Ms: r.p99Ms,
  errors: r.errors,
  requests: r.requests,
});

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '10' } } });
  const seconds = Number(values.seconds);
  const wrkVersion = ensureWrk(log);
  const children = new Children();
  try {
    const demo = join(repoRoot(), '.demo-data');
    await ensureDemoData(demo, silentLogger);
    const dir = children.tempDir('bench-data');
    await cp(demo, dir, { recursive: true });
    const live = await publishOlderGenerations(children, dir);
    const args = ['--source', dir, '--keys', join(dir, 'keys.json'), '--workers', '1', '--response-cache-mb', '0', '--drain-seconds', '0'];
    const replicas = await Promise.all(['p1', 'p2', 'p3'].map(async (n) => new Replica(children, n, await freePort(), await freePort(), args, {}, false)));
    await Promise.all(replicas.map((r) => r.start(180_000)));
    const paths = await writePaths(children, replicas[0]!.url);
    const points: Point[] = [];
    const wrk = (base: string) =>
      runWrk({ baseUrl: base, pathsFile: paths.file, apiKey: DEMO_KEY, mode: 'list', connections: CONNECTIONS, durationSec: seconds });
    for (const n of [1, 2, 3]) {
      const lb = await balancer(
        children,
        replicas.slice(0, n).map((r) => ({ name: r.name, port: r.port })),
      );
      await wrk(lb.url); // warm-up of this set, not counted
      log(`${n} replica(s) through haproxy`);
      points.push(point(`pitcache, ${n} replica${n > 1 ? 's' : ''}`, 'haproxy', await wrk(lb.url)));
      await lb.stop();
    }
    const bytes = await meanAnswerBytes(replicas[0]!.url, paths.list, { 'x-api-key': DEMO_KEY });
    const ceilingPort = await freePort();
    const ceiling = children.spawn(ceilingArgv(ceilingPort, bytes, 1));
    const ceilingOut = tail(ceiling);
    await waitAnswering(`http://127.0.0.1:${ceilingPort}/`, ceilingOut, 20_000);
    const lb = await balancer(children, [{ name: 'ceiling', port: ceilingPort }]);
    log('ceiling');
    points.push(point(`uWS ceiling (${bytes} B body), 1 thread`, 'haproxy', await wrk(lb.url)));
    points.push(point(`uWS ceiling (${bytes} B body), 1 thread`, 'direct', await wrk(`http://127.0.0.1:${ceilingPort}`)));
    await lb.stop();
    ceiling.kill('SIGTERM');
    await exitOf(ceiling);

    let cursor: CursorLoadResult | string;
    try {
      log('cross-replica cursor');
      // The generations the bench published, below the live one.
      const older = Array.from({ length: EXTRA_GENERATIONS - 1 }, (_, i) => live - EXTRA_GENERATIONS + 1 + i);
      cursor = await cursorLoadCost(replicas[0]!.url, replicas[1]!.url, DEMO_KEY, '/pemi/grid_stress', older);
    } catch (e) {
      cursor = `not measured: ${(e as Error).message}`;
    }
    await Promise.all(replicas.map((r) => r.stop()));
    await report({ seconds, wrkVersion, bytes, points, cursor, args });
  } finally {
    children.cleanUp();
  }
}

/**
 * Older generations for the cursor figure: publishes (`--replace`) the live
 * pemi/grid_stress snapshot without its last row, then whole again, and so on,
 * EXTRA_GENERATIONS times (an identical replace publishes nothing). Returns the live
 * generation number.
 */
async function publishOlderGenerations(children: Children, dir: string): Promise<number> {
  const folder = join(dir, 'pemi/grid_stress');
  const manifestOf = async (): Promise<{ generation: number; object: string }> =>
    JSON.parse(await readFile(join(folder, 'manifest.json'), 'utf8')) as { generation: number; object: string };
  const whole = join(folder, (await manifestOf()).object);
  const table = tableFromIPC(await readFile(whole));
  const shorter = join(children.tempDir('bench-input'), 'shorter.arrow');
  await writeFile(shorter, tableToIPC(table.slice(0, table.numRows - 1), 'file'));
  for (let i = 0; i < EXTRA_GENERATIONS; i++) {
    const input = i % 2 === 0 ? shorter : whole;
    const child = children.spawn([
      process.execPath,
      cliPath(),
      'publish',
      '--source',
      dir,
      '--product',
      'pemi',
      '--dataset',
      'grid_stress',
      '--replace',
      '--input',
      input,
    ]);
    const out = tail(child);
    if ((await exitOf(child)).code !== 0 || !out().includes('published pemi/grid_stress generation')) throw new Error(`publish did not publish:\n${out()}`);
  }
  return (await manifestOf()).generation;
}

async function balancer(children: Children, servers: ReadonlyArray<{ name: string; port: number }>): Promise<Haproxy> {
  const dir = children.tempDir('bench-haproxy');
  const port = await freePort();
  const h = await Haproxy.start(children, dir, filledConfig(shippedConfig(), port, [{ pathPrefixes: [], servers }]), port);
  for (const s of servers) await h.waitStatus(s.name, 'UP');
  return h;
}

/** 2,000 seeded single-series windows over the demo dataset's zones and last 600 days. */
async function writePaths(children: Children, base: string): Promise<{ file: string; list: string[] }> {
  const r = await fetch(`${base}/pemi/grid_stress?limit=10000`, { headers: { 'x-api-key': DEMO_KEY } });
  const rows = ((await r.json()) as { data: Array<{ bidding_zone: string; date: string }> }).data;
  const zones = [...new Set(rows.map((x) => x.bidding_zone))];
  const last = Math.max(...rows.map((x) => Date.parse(x.date) / 86_400_000));
  const rng = new Rng('pitcache-bench-cluster-v1');
  const day = (d: number): string => new Date(d * 86_400_000).toISOString().slice(0, 10);
  const list = Array.from({ length: 2000 }, () => {
    const d = last - rng.int(0, 600);
    const z = zones[rng.int(0, zones.length - 1)]!;
    return `/pemi/grid_stress?bidding_zone=${encodeURIComponent(z)}&date_from=${day(d - 90)}&date_to=${day(d)}&as_of=${day(d)}`;
  });
  const file = join(children.tempDir('bench-paths'), 'paths.txt');
  await writeFile(file, list.join('\n') + '\n');
  return { file, list };
}

interface Report {
  readonly seconds: number;
  readonly wrkVersion: string;
  readonly bytes: number;
  readonly points: readonly Point[];
  readonly cursor: CursorLoadResult | string;
  readonly args: readonly string[];
}

async function report(r: Report): Promise<void> {
  const cpu = spawnSync('nproc', { encoding: 'utf8' }).stdout.trim();
  const load = spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim();
  const one = r.points[0]!.reqPerSec;
  const md = [
    '# pitcache replicas behind HAProxy (issue 10)',
    '',
    `Command: \`npm run bench:cluster -- --seconds ${r.seconds}\`. HAProxy ${haproxyVersion()} with \`${SHIPPED_FILE}\` as shipped (bind and server lines filled), wrk ${r.wrkVersion}: \`wrk -t 1 -c ${CONNECTIONS} -d ${r.seconds}s -s bench/wrk/paths.lua <url> -- paths.txt <key> list\` after a warm-up run of the same length.`,
    `Replicas: \`pitcache serve ${r.args.join(' ').replace(/\/tmp\/[^/\s]+/g, '<copy of .demo-data>')}\`.`,
    `Workload: 2,000 seeded single-series backtest windows on the demo pemi/grid_stress (\`bidding_zone=Z&date_from=D-90&date_to=D&as_of=D\`), JSON, mean answer ${r.bytes} B.`,
    `Machine: ${cpu} cores shared by every process here (wrk, HAProxy, the replicas) and by other work (load average at the end: ${load}). Every point is CPU-bound: more replicas than cores cannot add throughput here, they only show that the balancer spreads the load and what it costs.`,
    '',
    '| server | via | req/s | vs 1 replica | p50 (ms) | p99 (ms) | errors |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...r.points.map(
      (p) =>
        `| ${p.name} | ${p.via} | ${p.reqPerSec.toFixed(0)} | ${(p.reqPerSec / one).toFixed(2)}x | ${p.p50Ms.toFixed(2)} | ${p.p99Ms.toFixed(2)} | ${p.errors} |`,
    ),
    '',
    '## A cursor continued on a replica that must load its generation (contract 12)',
    '',
    typeof r.cursor === 'string'
      ? r.cursor
      : [
          `Query \`${r.cursor.query}\` (1,000-row JSON pages of the whole demo pemi/grid_stress), ${r.cursor.samples} samples, one request at a time: page 1 on replica A with \`generation=g\`, page 2 on replica B (which never held g: it loads g from the source), page 3 on B (g held).`,
          '',
          '| continuation on B | median (ms) | samples (ms) |',
          '|---|---:|---|',
          `| page 2: loads the generation | ${median(r.cursor.loadMs).toFixed(1)} | ${r.cursor.loadMs.map((x) => x.toFixed(1)).join(', ')} |`,
          `| page 3: generation held | ${median(r.cursor.heldMs).toFixed(1)} | ${r.cursor.heldMs.map((x) => x.toFixed(1)).join(', ')} |`,
        ].join('\n'),
    '',
  ].join('\n');
  await writeFile(join(repoRoot(), 'bench/cluster/RESULTS-cluster.md'), md);
  await writeFile(join(repoRoot(), 'bench/cluster/RESULTS-cluster.json'), JSON.stringify({ ...r, haproxy: haproxyVersion(), cpu, load }, null, 2) + '\n');
  process.stdout.write(md);
}

await main();
