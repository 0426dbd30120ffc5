/**
 * `node dist/bench/large/ready-rounds.js --work DIR [--before-cli OTHER/dist/src/cli/main.js] [--rounds 3]`:
 * start to ready of the generation that `npm run bench:large -- --work DIR` published
 * (DIR/large-source, from DIR/large-parquet), against DuckDB reading the same Parquet files
 * into a table, in alternating rounds: each round times this build's `pitcache serve`, the
 * other build's when given, and DuckDB, one after the other (the order turned each round),
 * so the ratios of a round are of the same minutes of this shared machine. Also each server's
 * RSS once ready, per Arrow byte.
 */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cliPath } from '../lib/paths.js';
import { median } from '../lib/stats.js';
import { duckdbLoad, serve } from './loads.js';

const { values: args } = parseArgs({ options: { work: { type: 'string' }, 'before-cli': { type: 'string' }, rounds: { type: 'string', default: '3' } } });
if (args.work === undefined) throw new Error('--work DIR (of an earlier bench:large --publish-only) is required');
const log = (m: string): void => void process.stderr.write(`[ready ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const source = join(args.work, 'large-source');
const parquet = join(args.work, 'large-parquet');
const manifest = JSON.parse(await readFile(join(source, 'pemi', 'grid_stress', 'manifest.json'), 'utf8')) as { rows: number; parts: Array<{ bytes: number }> };
const arrow = manifest.parts.reduce((n, p) => n + p.bytes, 0);
const runs: Array<{ name: string; run: () => Promise<{ ms: number; rss: number }> }> = [
  { name: 'pitcache', run: () => timed(cliPath()) },
  ...(args['before-cli'] === undefined ? [] : [{ name: 'pitcache before', run: () => timed(resolve(args['before-cli']!)) }]),
  {
    name: 'DuckDB',
    run: async () => {
      const d = await duckdbLoad(parquet);
      if (d.rows !== manifest.rows) throw new Error(`DuckDB read ${d.rows} rows, not ${manifest.rows}`);
      return { ms: d.ms, rss: d.rssMiB * 2 ** 20 };
    },
  },
];
async function timed(cli: string): Promise<{ ms: number; rss: number }> {
  const s = await serve(cli, source);
  await s.server.stop();
  return { ms: s.readyMs, rss: s.rssBytes };
}

const times = new Map(runs.map((r) => [r.name, [] as number[]]));
const rss = new Map(runs.map((r) => [r.name, [] as number[]]));
log(`${manifest.rows} rows, ${manifest.parts.length} parts, ${(arrow / 2 ** 30).toFixed(2)} GiB of Arrow`);
for (let r = 0; r < Number(args.rounds); r++) {
  const order = r % 2 === 0 ? runs : [...runs].reverse();
  for (const x of order) {
    const { ms, rss: bytes } = await x.run();
    times.get(x.name)!.push(ms);
    rss.get(x.name)!.push(bytes);
    log(`round ${r} ${x.name}: ${(ms / 1000).toFixed(1)} s, RSS ${(bytes / 2 ** 20).toFixed(0)} MiB`);
  }
}
const duck = times.get('DuckDB')!;
const lines = [
  `| | rounds | median | ÷ DuckDB, by round | RSS ÷ Arrow (pitcache: once ready; DuckDB: its peak) |`,
  `|---|---|---:|---|---:|`,
  ...runs.map((x) => {
    const t = times.get(x.name)!;
    const per = t.map((ms, i) => (ms / duck[i]!).toFixed(2)).join(', ');
    return `| ${x.name} | ${t.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s | ${(median(t) / 1000).toFixed(1)} s | ${per} | ${(median(rss.get(x.name)!) / arrow).toFixed(2)} |`;
  }),
];
process.stdout.write(lines.join('\n') + '\n');
