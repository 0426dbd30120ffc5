/**
 * `npm run bench:large`: a dataset of any size (contract 14) end to end, as a user with a
 * folder of Parquet files would meet it. One run:
 *
 *   1. DuckDB writes `--rows` row-versions of pemi/grid_stress (`--series` bidding zones,
 *      each a run of days, one version a key) as `--files` Parquet files (zstd), whole
 *      series per file, the series key in their key-value metadata; and the same rows'
 *      like as a small dataset of `--small-rows`.
 *   2. `pitcache publish --input <folder>` of each: time and peak RSS; the generation's
 *      Arrow bytes (its parts) from its manifest.
 *   3. `pitcache serve --workers 1` of each: time from start to /readyz 200, RSS once ready,
 *      RSS per Arrow byte; DuckDB (in a process of its own, every core) reading the same
 *      files into a table: its time and peak RSS.
 *   4. Random as_of queries (one series, a 30-day window, an as_of inside it) against both
 *      servers at once, in alternating wrk slices: p50 and p99 of each, which should not
 *      grow with the dataset.
 *
 *   npm run bench:large -- [--rows 72000000] [--small-rows 1000000] [--series 20000] [--files 16] [--rounds 3]
 *     [--duration 10] [--dir /var/tmp] [--out FILE]
 *
 * `--work DIR` keeps the files and generations in DIR (not deleted) and reuses what an earlier
 * run with the same DIR published, with the figures it recorded (`published.json`);
 * `--publish-only` stops after the publishes. So the long publish can run apart from the
 * measurements that need a quiet machine, which a second run with the same `--work` makes.
 *
 * At the default size the Parquet files are about 1.5 GiB, the generation about 4.3 GiB of
 * Arrow, and the machine needs about 3x that in memory (pitcache and DuckDB run one after the
 * other; the small server stays up beside the large one).
 */
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DuckDBInstance } from '@duckdb/node-api';
import { BENCH_API_KEY, keysFile } from '../data/ensure-data.js';
import { cliPath } from '../lib/paths.js';
import { type Spawned } from '../lib/proc.js';
import { median } from '../lib/stats.js';
import { publishRun } from '../publish/publish-run.js';
import { runWrk } from '../wrk/run-wrk.js';
import { duckdbLoad, serve, type Served } from './loads.js';

const log = (m: string): void => void process.stderr.write(`[large ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '72000000' },
    'small-rows': { type: 'string', default: '1000000' },
    series: { type: 'string', default: '20000' },
    files: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    dir: { type: 'string', default: '/var/tmp' },
    work: { type: 'string' },
    'publish-only': { type: 'boolean', default: false },
    out: { type: 'string' },
  },
});
const DAY0 = '2000-01-01';
const GiB = 2 ** 30;
const MiB = 2 ** 20;

/** Rows [0, rows) of `series` series, `rows / series` days each, as `files` Parquet files of whole series. */
async function writeParquet(folder: string, rows: number, series: number, files: number): Promise<number> {
  await mkdir(folder, { recursive: true });
  const days = Math.floor(rows / series);
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    for (let f = 0; f < files; f++) {
      const [s0, s1] = [Math.floor((f * series) / files), Math.floor(((f + 1) * series) / files)];
      // i runs over this file's (series, day) pairs; h is a hash of i: times, values, nulls and labels from it.
      await c.run(`COPY (
        SELECT date, eff AS str_effective_at, eff + to_seconds(1 + (h % 7200)::BIGINT) AS str_observed_at,
               eff + to_seconds(1 + (h % 7200)::BIGINT) + to_microseconds((h % 999999)::BIGINT) AS str_ingested_at,
               'v1' AS model_version, 'Z' || lpad(s::VARCHAR, 5, '0') AS bidding_zone,
               CASE WHEN h % 20 = 0 THEN NULL ELSE ((h % 2000001)::DOUBLE - 1000000) / 64 END AS value,
               h % 2 = 1 AS flag, ['low', 'mid', 'high', 'peak'][(h % 4)::INT + 1] AS label
        FROM (SELECT i // ${days} AS s, DATE '${DAY0}' + (i % ${days})::INT AS date,
                     (DATE '${DAY0}' + (i % ${days})::INT)::TIMESTAMP + to_seconds((hash(i) % 86400)::BIGINT) AS eff, hash(i) AS h
              FROM range(${s0 * days}, ${s1 * days}) t(i))
        ORDER BY s, date
      ) TO '${join(folder, `part-${String(f).padStart(3, '0')}.parquet`)}'
        (FORMAT parquet, COMPRESSION zstd, KV_METADATA {'pitcache.series_key': '["bidding_zone"]'})`);
    }
  } finally {
    c.closeSync();
  }
  return days * series;
}

async function folderBytes(folder: string): Promise<number> {
  let total = 0;
  for (const n of await readdir(folder)) total += (await stat(join(folder, n))).size;
  return total;
}

/** The served generation's Arrow bytes: its parts' sum, or its one object's size. */
async function generationBytes(source: string): Promise<number> {
  const dir = join(source, 'pemi', 'grid_stress');
  const manifest = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as { object?: string; parts?: Array<{ bytes: number }> };
  if (manifest.parts !== undefined) return manifest.parts.reduce((s, p) => s + p.bytes, 0);
  return (await stat(join(dir, manifest.object!))).size;
}

/** `count` random one-series, 30-day-window as_of paths over `days` days of `series` zones. */
function queryPaths(count: number, series: number, days: number, seed: number): string {
  let x = seed >>> 0 || 1;
  const next = (n: number): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
  const day = (d: number): string => new Date(Date.parse(DAY0) + d * 86_400_000).toISOString().slice(0, 10);
  const lines: string[] = [];
  for (let q = 0; q < count; q++) {
    const end = 30 + next(days - 30);
    const zone = `Z${String(next(series)).padStart(5, '0')}`;
    lines.push(`/pemi/grid_stress?bidding_zone=${zone}&date_from=${day(end - 29)}&date_to=${day(end)}&as_of=${day(end - next(30))}`);
  }
  return lines.join('\n') + '\n';
}

interface Published {
  readonly written: number;
  readonly parquet: number;
  readonly pub: { readonly ms: number; readonly rssMiB: number };
  readonly arrow: number;
}

async function writeAndPublish(s: { name: string; rows: number; series: number; files: number }, input: string, source: string): Promise<Published> {
  log(`${s.name}: writing ${s.rows} rows (${s.series} series) as ${s.files} Parquet files`);
  const written = await writeParquet(input, s.rows, s.series, s.files);
  const parquet = await folderBytes(input);
  log(`${s.name}: ${(parquet / MiB).toFixed(0)} MiB of Parquet; publishing`);
  await mkdir(source, { recursive: true });
  await writeFile(join(source, 'keys.json'), JSON.stringify(keysFile()));
  const pub = await publishRun(
    cliPath(),
    ['--source', source, '--product', 'pemi', '--dataset', 'grid_stress', '--input', input, '--series-key', 'bidding_zone', '--replace'],
    null,
  );
  if (!pub.ok) throw new Error(`publish failed: ${pub.out}`);
  const arrow = await generationBytes(source);
  log(`${s.name}: published in ${(pub.ms / 1000).toFixed(1)} s, peak RSS ${pub.rssMiB.toFixed(0)} MiB, ${(arrow / GiB).toFixed(2)} GiB of Arrow`);
  return { written, parquet, pub: { ms: pub.ms, rssMiB: pub.rssMiB }, arrow };
}

async function main(): Promise<void> {
  const num = (k: keyof typeof args): number => Number(args[k]);
  const [rows, smallRows, series, files, rounds, duration] = [num('rows'), num('small-rows'), num('series'), num('files'), num('rounds'), num('duration')];
  const dir = args.work ?? (await mkdtemp(join(args.dir, 'pitcache-bench-large-')));
  if (args.work !== undefined) await mkdir(dir, { recursive: true });
  const started: Spawned[] = [];
  try {
    const sizes = [
      { name: 'large', rows, series, files },
      { name: 'small', rows: smallRows, series: Math.min(series, Math.floor(smallRows / 50)), files: 1 },
    ];
    const report: string[] = [];
    const served: Record<string, Served & { days: number; series: number }> = {};
    for (const s of sizes) {
      const input = join(dir, `${s.name}-parquet`);
      const source = join(dir, `${s.name}-source`);
      const recorded = join(dir, `${s.name}-published.json`);
      const earlier =
        args.work === undefined
          ? null
          : await readFile(recorded, 'utf8').then(
              (t) => JSON.parse(t) as Published,
              () => null,
            );
      const { written, parquet, pub, arrow } = earlier ?? (await writeAndPublish(s, input, source));
      if (earlier !== null) log(`${s.name}: published by an earlier run (${recorded})`);
      else await writeFile(recorded, JSON.stringify({ written, parquet, pub, arrow }));
      if (args['publish-only']) continue;
      const sv = await serve(cliPath(), source);
      started.push(sv.server);
      served[s.name] = { ...sv, days: Math.floor(s.rows / s.series), series: s.series };
      log(`${s.name}: ready in ${(sv.readyMs / 1000).toFixed(1)} s, RSS ${(sv.rssBytes / MiB).toFixed(0)} MiB`);
      // DuckDB after pitcache is up, so the two never load at once (the small server is the one left up beside it).
      if (s.name === 'large') {
        await sv.server.stop();
        started.pop();
      }
      log(`${s.name}: DuckDB reading the folder into a table`);
      const duck = await duckdbLoad(input);
      if (duck.rows !== written) throw new Error(`DuckDB read ${duck.rows} rows, not ${written}`);
      report.push(
        `| ${s.name} | ${written.toLocaleString('en-US')} | ${s.series.toLocaleString('en-US')} | ${(parquet / GiB).toFixed(2)} GiB | ${(arrow / GiB).toFixed(2)} GiB | ` +
          `${(pub.ms / 1000).toFixed(1)} s | ${(pub.rssMiB / 1024).toFixed(2)} GiB | ${(sv.readyMs / 1000).toFixed(1)} s | ${(duck.ms / 1000).toFixed(1)} s | ` +
          `${(duck.ms / sv.readyMs).toFixed(2)} | ${(sv.rssBytes / arrow).toFixed(2)} | ${(duck.rssMiB / 1024).toFixed(2)} GiB |`,
      );
    }
    if (args['publish-only']) return;
    // The large server again for the queries (its load was timed above, alone).
    const large = await serve(cliPath(), join(dir, 'large-source'));
    started.push(large.server);
    const small = served.small!;
    const targets = [
      { name: 'large', base: large.base, paths: join(dir, 'large.paths'), days: served.large!.days, series: served.large!.series },
      { name: 'small', base: small.base, paths: join(dir, 'small.paths'), days: small.days, series: small.series },
    ];
    for (const t of targets) await writeFile(t.paths, queryPaths(20_000, t.series, t.days, 42));
    const slices: Record<string, Array<{ p50: number; p99: number; rps: number }>> = { large: [], small: [] };
    for (const t of targets)
      await runWrk({ baseUrl: t.base, pathsFile: t.paths, apiKey: BENCH_API_KEY, mode: 'list', connections: 8, durationSec: 3, cpus: '1' });
    for (let r = 0; r < rounds; r++) {
      for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
        const w = await runWrk({ baseUrl: t.base, pathsFile: t.paths, apiKey: BENCH_API_KEY, mode: 'list', connections: 8, durationSec: duration, cpus: '1' });
        if (w.errors > 0) throw new Error(`${t.name}: ${w.errors} failed requests (errors and non-2xx answers)`);
        slices[t.name]!.push({ p50: w.p50Ms, p99: w.p99Ms, rps: w.requests / w.seconds });
        log(`round ${r} ${t.name}: ${(w.requests / w.seconds).toFixed(0)} req/s, p50 ${w.p50Ms.toFixed(2)} ms, p99 ${w.p99Ms.toFixed(2)} ms`);
      }
    }
    const m = (name: string, k: 'p50' | 'p99' | 'rps'): number => median(slices[name]!.map((x) => x[k]));
    const text = [
      `| dataset | row-versions | series | Parquet | Arrow | publish | publish peak RSS | pitcache start to ready | DuckDB into a table | DuckDB ÷ pitcache | pitcache RSS ÷ Arrow | DuckDB peak RSS |`,
      `|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
      ...report,
      '',
      `Random as_of queries (one series, a 30-day window), 8 connections, ${rounds} alternating rounds of ${duration} s, medians:`,
      '',
      `| dataset | req/s | p50 | p99 |`,
      `|---|---:|---:|---:|`,
      ...['large', 'small'].map((n) => `| ${n} | ${m(n, 'rps').toFixed(0)} | ${m(n, 'p50').toFixed(2)} ms | ${m(n, 'p99').toFixed(2)} ms |`),
      '',
      `large ÷ small: p50 ${(m('large', 'p50') / m('small', 'p50')).toFixed(2)}, p99 ${(m('large', 'p99') / m('small', 'p99')).toFixed(2)}`,
    ].join('\n');
    process.stdout.write(text + '\n');
    if (args.out !== undefined) await writeFile(args.out, text + '\n');
  } finally {
    await Promise.all(started.map((s) => s.stop()));
    if (args.work === undefined) await rm(dir, { recursive: true, force: true });
  }
}

await main();
