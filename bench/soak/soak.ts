/**
 * `npm run bench:soak -- [--publishes 200] [--every 2.5] [--clients 8] [--retain-memory 25%] [--out bench/soak]`
 * `  [--dataset wssi_us/demand_shock] [--revise 0] [--cursor-each] [--serve '--workers 1 ...'] [--cli dist/src/cli/main.js] [--compare before/soak.json]`
 *
 * Serves a copy of the demo data set with --refresh-interval 1 while a loop publishes a new
 * generation of --dataset (its rows again, as `publish --replace` does, with --revise
 * percent of one value column changed) every `--every` seconds, and a bounded load of data
 * requests and cursor chains runs (--clients 0: none). With --cursor-each, each publish
 * waits until the server answers from the new generation with a `?limit=1` page, whose
 * cursor keeps that generation retained (the case of a client that pages every
 * generation). After every publish it records the server's RSS (/proc) and the serving
 * thread's heap (/admin/status), and per minute the p99 of the requests. Writes
 * soak.json, rss.svg and soak.md (the section RESULTS.md quotes) into --out. --cli runs
 * another build of the server (a before/after pair), --compare draws that run's RSS beside
 * this one's.
 *
 * What it checks (issue 14): RSS after N publishes stays within live data + the retention
 * budget + 10% of the starting RSS; 0 failed requests; p99 of the last minute within 1.5x
 * the first.
 */
import http from 'node:http';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { tableFromIPC, tableToIPC, Type } from 'apache-arrow';
import { LocalSource } from '../../src/source/local-source.js';
import { DEMO_ADMIN_KEY, DEMO_KEY } from '../../src/demo/ensure-demo.js';
import { publish } from '../../src/publish/publish.js';
import { startDemoServer } from '../lib/demo-server.js';
import { repoRoot } from '../lib/paths.js';
import { readMemory } from '../lib/proc.js';
import { svgLines } from './svg-plot.js';

interface Sample {
  publish: number;
  atSec: number;
  generation: number | null;
  rssBytes: number;
  heapUsedBytes: number | null;
  retainedBytes: number | null;
  budgetBytes: number | null;
  liveBytes: number | null;
}

const log = (m: string): void => void process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${m}\n`);

async function main(): Promise<void> {
  const { values: a } = parseArgs({
    options: {
      publishes: { type: 'string', default: '200' },
      every: { type: 'string', default: '2.5' },
      clients: { type: 'string', default: '8' },
      'retain-memory': { type: 'string', default: '' },
      out: { type: 'string', default: 'bench/soak' },
      dataset: { type: 'string', default: 'wssi_us/demand_shock' },
      revise: { type: 'string', default: '0' },
      'cursor-each': { type: 'boolean', default: false },
      serve: { type: 'string', default: '' },
      cli: { type: 'string', default: '' },
      compare: { type: 'string', default: '' },
      label: { type: 'string', default: 'RSS' },
    },
  });
  const [PRODUCT, DATASET] = a.dataset!.split('/') as [string, string];
  const publishes = Number(a.publishes);
  const everyMs = Number(a.every) * 1000;
  const clients = Number(a.clients);
  const out = resolve(repoRoot(), a.out!);
  await mkdir(out, { recursive: true });

  const serveArgs = [
    '--refresh-interval',
    '1',
    ...(a['retain-memory'] === '' ? [] : ['--retain-memory', a['retain-memory']!]),
    ...a.serve!.split(' ').filter((x) => x !== ''),
  ];
  const demo = await startDemoServer('soak', serveArgs, a.cli === '' ? undefined : resolve(a.cli!));
  const { dir, base, server } = demo;
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients + 2 });
  try {
    const source = new LocalSource(dir);
    const manifest = JSON.parse(await readFile(join(dir, PRODUCT, DATASET, 'manifest.json'), 'utf8')) as { object: string };
    const input = new Uint8Array(await readFile(join(dir, PRODUCT, DATASET, manifest.object)));
    const revise = Number(a.revise) / 100;
    let seed = 1;
    const random = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;

    const t0 = Date.now();
    if (a['cursor-each']) await pageOf(base, agent, `/${PRODUCT}/${DATASET}?limit=1`, 1);
    const samples: Sample[] = [await sample(base, agent, server.pid, 0, t0, a.dataset!)];
    log(`start: RSS ${mb(samples[0]!.rssBytes)} MB`);

    const load = startLoad(base, agent, clients, t0);
    for (let i = 1; i <= publishes; i++) {
      const began = Date.now();
      await publish({
        source,
        productId: PRODUCT,
        dataset: DATASET,
        input: { format: 'arrow', bytes: revise > 0 ? revised(input, revise, random) : input },
        rebuild: false,
        replace: true,
        seriesKey: null,
        publishedAtUs: Date.now() * 1000,
      });
      if (a['cursor-each']) await pageOf(base, agent, `/${PRODUCT}/${DATASET}?limit=1`, i + 1);
      await sleep(Math.max(0, everyMs - (Date.now() - began)));
      samples.push(await sample(base, agent, server.pid, i, t0, a.dataset!));
      if (i % 10 === 0) log(`publish ${i}: RSS ${mb(samples.at(-1)!.rssBytes)} MB, ${load.requests()} requests, ${load.failures()} failed`);
    }
    const result = await load.stop();
    const before = a.compare === '' ? null : await readRun(resolve(a.compare!));
    const report = {
      publishes,
      every_seconds: everyMs / 1000,
      clients,
      retain_memory: a['retain-memory'] || 'default',
      dataset: a.dataset,
      revise_percent: Number(a.revise),
      cursor_each: a['cursor-each'],
      serve: serveArgs.join(' '),
      cli: a.cli || 'this build',
      samples,
      requests: result.requests,
      failed: result.failed,
      failures_by_status: result.byStatus,
      p99_ms_per_minute: result.p99PerMinute,
    };
    await writeFile(join(out, 'soak.json'), JSON.stringify({ ...report, label: a.label }, null, 2) + '\n');
    await writeFile(
      join(out, 'rss.svg'),
      svgLines({
        title: `pitcache RSS while publishing ${publishes} generations of ${PRODUCT}/${DATASET}`,
        xLabel: 'publishes',
        yLabel: 'MB',
        series: [
          ...(before === null ? [] : [{ name: before.label, points: before.samples.map((s): [number, number] => [s.publish, s.rssBytes / 2 ** 20]) }]),
          { name: a.label!, points: samples.map((s) => [s.publish, s.rssBytes / 2 ** 20]) },
          { name: 'retained generations', points: samples.filter((s) => s.retainedBytes !== null).map((s) => [s.publish, s.retainedBytes! / 2 ** 20]) },
          {
            name: 'bound: start RSS + budget + 10%',
            points: samples.filter((s) => s.budgetBytes !== null).map((s) => [s.publish, bound(samples[0]!, s) / 2 ** 20]),
          },
        ],
      }),
    );
    await writeFile(join(out, 'soak.md'), markdown(report, samples));
    log(`done: ${join(out, 'soak.md')}`);
  } finally {
    agent.destroy();
    await demo.stop();
  }
}

/** The bound: live data + the budget + 10% of the starting RSS. The starting RSS already holds the live data. */
function bound(first: Sample, s: Sample): number {
  return first.rssBytes * 1.1 + (s.budgetBytes ?? 0);
}

/** A run written before (its soak.json): the series it drew, named by its label. */
async function readRun(path: string): Promise<{ label: string; samples: Sample[] }> {
  const r = JSON.parse(await readFile(path, 'utf8')) as { label?: string; samples: Sample[] };
  return { label: r.label ?? path, samples: r.samples };
}

/**
 * The snapshot's rows with `share` of one value column's cells changed (the first floating
 * point column): a recomputation that revises a few figures, published as the whole
 * generation (--replace), so every generation has the same size.
 */
function revised(input: Uint8Array, share: number, random: () => number): Uint8Array {
  const table = tableFromIPC(input);
  const field = table.schema.fields.find((f) => f.type.typeId === Type.Float);
  if (field === undefined) throw new Error('--revise: the dataset has no floating point column');
  for (const chunk of table.getChild(field.name)!.data) {
    const values = chunk.values as Float32Array | Float64Array;
    for (let i = 0; i < values.length; i++) if (random() < share) values[i] = values[i]! + 1 + random();
  }
  return tableToIPC(table, 'file');
}

/** Asks `path` until the server answers from `generation` (it polls every second): the answer hands out a cursor on it. */
async function pageOf(base: string, agent: http.Agent, path: string, generation: number): Promise<void> {
  for (let tries = 0; tries < 600; tries++) {
    const r = await getRaw(base, agent, path, DEMO_KEY).catch(() => null);
    if (r?.status === 200) {
      const body = JSON.parse(r.text) as { metadata: { generation: number } };
      if (body.metadata.generation >= generation) return;
    }
    await sleep(100);
  }
  throw new Error(`${path}: generation ${generation} not served within a minute`);
}

async function sample(base: string, agent: http.Agent, pid: number, n: number, t0: number, dataset: string): Promise<Sample> {
  const mem = readMemory(pid);
  const status = await getJson(base, agent, '/admin/status', DEMO_ADMIN_KEY).catch(() => null);
  const ds = (status?.['datasets'] as Array<Record<string, unknown>> | undefined)?.find((d) => d['dataset'] === dataset);
  const proc = status?.['process'] as Record<string, number> | undefined;
  const retention = status?.['retention'] as Record<string, number> | undefined;
  return {
    publish: n,
    atSec: (Date.now() - t0) / 1000,
    generation: (ds?.['generation'] as number | undefined) ?? null,
    rssBytes: mem?.rss ?? NaN,
    heapUsedBytes: proc?.['heap_used'] ?? null,
    retainedBytes: retention?.['held_bytes'] ?? null,
    budgetBytes: retention?.['budget_bytes'] ?? null,
    liveBytes: retention?.['live_bytes'] ?? null,
  };
}

interface LoadResult {
  requests: number;
  failed: number;
  byStatus: Record<string, number>;
  p99PerMinute: number[];
}

/** `clients` loops, each: a latest query, a range page, or a 3-page cursor chain, back to back. */
function startLoad(base: string, agent: http.Agent, clients: number, t0: number) {
  let stopping = false;
  let requests = 0;
  const byStatus: Record<string, number> = {};
  const perMinute: number[][] = [];
  const paths = [
    '/wssi_us/demand_shock?limit=50',
    '/wssi_us/demand_shock?latest=false&limit=200',
    '/pemi/grid_stress?as_of=2026-04-01&limit=100',
    '/gbsi_us/system_stress?date_from=2026-03-01&limit=200',
  ];
  const timed = async (path: string): Promise<{ status: number; body: Record<string, unknown> | null }> => {
    const began = performance.now();
    const r = await getRaw(base, agent, path, DEMO_KEY).catch(() => ({ status: 0, text: '' }));
    const minute = Math.floor((Date.now() - t0) / 60_000);
    (perMinute[minute] ??= []).push(performance.now() - began);
    requests++;
    if (r.status !== 200) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1;
    return { status: r.status, body: r.status === 200 ? (JSON.parse(r.text) as Record<string, unknown>) : null };
  };
  const loop = async (c: number): Promise<void> => {
    for (let i = 0; !stopping; i++) {
      if ((i + c) % 5 === 0) {
        // A cursor chain across whatever publishes happen meanwhile.
        let r = await timed('/wssi_us/demand_shock?latest=false&limit=100');
        for (let page = 0; page < 3 && r.body?.['next_cursor'] !== undefined; page++) {
          await sleep(200);
          r = await timed(`/wssi_us/demand_shock?latest=false&limit=100&cursor=${String(r.body['next_cursor'])}`);
        }
      } else await timed(paths[(i + c) % paths.length]!);
    }
  };
  const running = Array.from({ length: clients }, (_, c) => loop(c));
  const failed = (): number => Object.values(byStatus).reduce((x, y) => x + y, 0);
  return {
    requests: () => requests,
    failures: failed,
    async stop(): Promise<LoadResult> {
      stopping = true;
      await Promise.all(running);
      return { requests, failed: failed(), byStatus, p99PerMinute: perMinute.map((l) => p99(l)) };
    },
  };
}

function p99(latencies: number[] | undefined): number {
  if (latencies === undefined || latencies.length === 0) return NaN;
  const s = [...latencies].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))]!;
}

function getRaw(base: string, agent: http.Agent, path: string, key: string): Promise<{ status: number; text: string }> {
  return new Promise((done, fail) => {
    const req = http.get(`${base}${path}`, { agent, headers: { 'x-api-key': key } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', fail);
    });
    req.setTimeout(30_000, () => req.destroy(new Error('timeout')));
    req.on('error', fail);
  });
}

async function getJson(base: string, agent: http.Agent, path: string, key: string): Promise<Record<string, unknown>> {
  const r = await getRaw(base, agent, path, key);
  if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
  return JSON.parse(r.text) as Record<string, unknown>;
}

function markdown(r: { publishes: number; requests: number; failed: number; p99_ms_per_minute: number[]; retain_memory: string }, s: Sample[]): string {
  const at = (n: number): Sample | undefined => s.find((x) => x.publish === n);
  const first = s[0]!;
  const last = s.at(-1)!;
  const p = r.p99_ms_per_minute;
  const lastFullMinute = p.length >= 2 ? p[p.length - 2]! : p.at(-1)!;
  const withinBound = last.budgetBytes === null ? 'n/a (no budget reported)' : last.rssBytes <= bound(first, last) ? 'yes' : 'no';
  return [
    `| | RSS MB | heap MB | retained MB | budget MB |`,
    `|---|---:|---:|---:|---:|`,
    ...[first, at(50), last]
      .filter((x): x is Sample => x !== undefined)
      .map((x) => `| after ${x.publish} publishes | ${mb(x.rssBytes)} | ${mb(x.heapUsedBytes)} | ${mb(x.retainedBytes)} | ${mb(x.budgetBytes)} |`),
    '',
    `- ${r.requests} requests, ${r.failed} failed; --retain-memory ${r.retain_memory}.`,
    `- RSS after ${last.publish} publishes within start RSS x 1.1 + budget (${mb(bound(first, last))} MB): ${withinBound}.`,
    `- p99 per minute (ms): ${p.map((x) => x.toFixed(1)).join(', ')}; last full minute / first: ${(lastFullMinute / p[0]!).toFixed(2)}x.`,
    '',
  ].join('\n');
}

function mb(b: number | null): string {
  return b === null || !Number.isFinite(b) ? '-' : (b / 2 ** 20).toFixed(1);
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

await main();
