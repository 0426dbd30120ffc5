/**
 * `pitcache publish` time and peak RSS, this build against another (--before-cli), on the
 * same inputs, in one run: for each input format (CSV, Arrow file, Parquet) and round, each
 * build publishes the same rows as generation 1 of an empty folder (`--replace`), in
 * alternating order; then each publishes a recomputation (the Arrow file again, "no
 * changes") on top of that generation; then each publishes every format once more with its
 * JS heap capped at --cap-mib, to say which fits. Peak RSS is the child's
 * `process.resourceUsage().maxRSS`, printed at its exit by a preloaded module.
 *
 *   npm run build && (cd ../other-checkout && npm run build)
 *   npm run bench:publish -- --before-cli ../other-checkout/dist/src/cli/main.js [--series 4000 --days 250 --rounds 3]
 */
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cliPath } from '../lib/paths.js';
import { writeInputFiles } from './input-files.js';
import { publishRun, type Run } from './publish-run.js';

const log = (m: string): void => void process.stderr.write(`[publish ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const { values: args } = parseArgs({
  options: {
    'before-cli': { type: 'string' },
    series: { type: 'string', default: '4000' },
    days: { type: 'string', default: '250' },
    rounds: { type: 'string', default: '3' },
    'cap-mib': { type: 'string', default: '48' },
    out: { type: 'string' },
  },
});

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const after = cliPath();
  const before = args['before-cli'] === undefined ? null : resolve(args['before-cli']);
  const builds: Array<[string, string]> = [['after', after], ...(before === null ? [] : ([['before', before]] as Array<[string, string]>))];
  const rounds = Number(args.rounds);
  const capMiB = Number(args['cap-mib']);
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-bench-publish-'));
  try {
    log(`writing ${Number(args.series) * Number(args.days)} rows as CSV, Arrow and Parquet in ${dir}`);
    const files = await writeInputFiles(dir, Number(args.series), Number(args.days), 36);
    const sizes = { csv: (await stat(files.csv)).size, arrow: (await stat(files.arrow)).size, parquet: (await stat(files.parquet)).size };
    const inputs: Array<[string, string]> = [
      ['csv', files.csv],
      ['arrow', files.arrow],
      ['parquet', files.parquet],
    ];
    const common = (source: string, input: string): string[] => ['--source', source, '--product', 'pemi', '--dataset', 'grid_stress', '--input', input];
    const results = new Map<string, Run[]>();
    const add = (key: string, r: Run): void => void results.set(key, [...(results.get(key) ?? []), r]);
    let n = 0;
    for (let round = 0; round < rounds; round++) {
      for (const [fmt, input] of inputs) {
        // Alternate which build goes first, round by round.
        const order = round % 2 === 0 ? builds : [...builds].reverse();
        for (const [who, cli] of order) {
          const source = join(dir, `out-${n++}`);
          const r = await publishRun(cli, [...common(source, input), '--series-key', 'bidding_zone', '--replace'], null);
          log(`round ${round} ${fmt} ${who}: ${r.ok ? 'ok' : 'FAILED'} ${r.ms.toFixed(0)} ms, peak RSS ${r.rssMiB.toFixed(0)} MiB`);
          add(`${fmt}/${who}`, r);
          if (fmt === 'csv') {
            const again = await publishRun(cli, common(source, files.arrow), null);
            log(`round ${round} recompute ${who}: ${again.ms.toFixed(0)} ms, peak RSS ${again.rssMiB.toFixed(0)} MiB (${again.out})`);
            add(`recompute/${who}`, again);
          }
          await rm(source, { recursive: true, force: true });
        }
      }
    }
    const capped: Array<[string, string, Run]> = [];
    for (const [fmt, input] of inputs) {
      for (const [who, cli] of builds) {
        const source = join(dir, `out-${n++}`);
        const r = await publishRun(cli, [...common(source, input), '--series-key', 'bidding_zone', '--replace'], capMiB);
        log(`cap ${capMiB} MiB ${fmt} ${who}: ${r.ok ? 'ok' : r.out}`);
        capped.push([fmt, who, r]);
        await rm(source, { recursive: true, force: true });
      }
    }

    const lines = [
      `${files.rows} rows (${args.series} series x ${args.days} days): CSV ${(sizes.csv / 2 ** 20).toFixed(1)} MiB, Arrow ${(sizes.arrow / 2 ** 20).toFixed(1)} MiB, Parquet ${(sizes.parquet / 2 ** 20).toFixed(1)} MiB; ${rounds} rounds, builds alternating; medians.`,
      '',
      `| input | before: time | after: time | after/before | before: peak RSS | after: peak RSS | after/before |`,
      `|---|---:|---:|---:|---:|---:|---:|`,
    ];
    for (const key of ['csv', 'arrow', 'parquet', 'recompute']) {
      const a = results.get(`${key}/after`) ?? [];
      const b = results.get(`${key}/before`) ?? [];
      const t = (rs: Run[]): number => median(rs.map((r) => r.ms)) / 1000;
      const m = (rs: Run[]): number => median(rs.map((r) => r.rssMiB));
      const label = key === 'recompute' ? 'recompute (Arrow on the CSV generation, no changes)' : `${key} (first publish)`;
      lines.push(
        `| ${label} | ${t(b).toFixed(2)} s | ${t(a).toFixed(2)} s | ${(t(a) / t(b)).toFixed(2)} | ${m(b).toFixed(0)} MiB | ${m(a).toFixed(0)} MiB | ${(m(a) / m(b)).toFixed(2)} |`,
      );
    }
    lines.push('', `Under \`--max-old-space-size=${capMiB}\`:`, '', '| input | before | after |', '|---|---|---|');
    for (const [fmt] of inputs) {
      const cell = (who: string): string => {
        const r = capped.find(([f, w]) => f === fmt && w === who)?.[2];
        return r === undefined ? '-' : r.ok ? `ok, ${(r.ms / 1000).toFixed(1)} s, ${r.rssMiB.toFixed(0)} MiB` : r.out;
      };
      lines.push(`| ${fmt} | ${cell('before')} | ${cell('after')} |`);
    }
    const text = lines.join('\n') + '\n';
    process.stdout.write(text);
    if (args.out !== undefined) await writeFile(args.out, text);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
