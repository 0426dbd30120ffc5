/**
 * `npm run bench:pair`: this build (B) against another (A) over HTTP, in paired rounds
 * (pair.ts), on the bench's main data set (bench/.data, built here if missing):
 *
 *   npm run bench:pair -- --before-cli /tmp/base/dist/src/cli/main.js [--rounds 4] [--duration 5]
 *     [--warmup 3] [--workloads walk-forward-loop,walk-forward-series,repeated] [--quick]
 *     [--serve-args "--row-cache-mb 1024"] [--out FILE]
 *     [--format csv|arrow]  (the same queries in that format)
 *     [--bulk-start 2023-01-01]  (the in-process bulk bench's data instead: bench/bulk/bulk-data.ts)
 *
 * page-walk follows every chain's cursors (wrk's walk mode, one thread a connection), as
 * `npm run bench` does.
 * A is built from another revision: `git worktree add /tmp/base <rev>`, node_modules linked,
 * `npm run build` there. Prints (and with --out writes) the rounds and ratios as JSON.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureData } from '../data/ensure-data.js';
import { planFor } from '../data/plan.js';
import { cliPath, repoRoot } from '../lib/paths.js';
import type { WorkloadName } from '../alternatives/types.js';
import { buildWorkloads, inFormat, OTHER_FORMATS, writePathsFile, WORKLOADS, type OtherFormat } from '../workloads.js';
import { bulkPlan, ensureBulkData } from '../bulk/bulk-data.js';
import { runPair } from './pair.js';

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      'before-cli': { type: 'string' },
      rounds: { type: 'string', default: '4' },
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '3' },
      workloads: { type: 'string', default: 'walk-forward-loop,walk-forward-series,repeated' },
      quick: { type: 'boolean', default: false },
      'serve-args': { type: 'string', default: '' },
      out: { type: 'string' },
      format: { type: 'string' },
      'bulk-start': { type: 'string' },
    },
  });
  if (args['before-cli'] === undefined) throw new Error('--before-cli <the other build main.js> is required');
  const names = args.workloads.split(',') as WorkloadName[];
  const unknown = names.filter((w) => !WORKLOADS.includes(w));
  if (unknown.length > 0) throw new Error(`unknown workload(s) ${unknown.join(', ')}: one of ${WORKLOADS.join(', ')}`);
  const log = (m: string): void => void process.stderr.write(`[pair ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
  const format = args.format;
  if (format !== undefined && !(OTHER_FORMATS as readonly string[]).includes(format)) throw new Error(`--format ${format}: one of ${OTHER_FORMATS.join(', ')}`);
  const bulk = args['bulk-start'];
  const sourceDir =
    bulk === undefined
      ? (await ensureData(join(repoRoot(), 'bench/.data'), 'main', args.quick, log)).sourceDir
      : (await ensureBulkData(join(repoRoot(), 'bench/.data'), bulk, log)).dir;
  const plan = bulk === undefined ? planFor('main', args.quick) : bulkPlan(bulk);
  const all = buildWorkloads(plan, { count: args.quick ? 2000 : 20000, pageWalkCount: args.quick ? 100 : 1000 });
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-pair-'));
  try {
    const paths: Record<string, string> = {};
    for (const w of names) {
      paths[w] = join(dir, `${w}.paths`);
      await writePathsFile(paths[w]!, format === undefined ? all[w] : inFormat(all[w], format as OtherFormat));
    }
    const results = await runPair({
      cliA: resolve(args['before-cli']),
      cliB: cliPath(),
      dataDir: sourceDir,
      paths,
      rounds: Number(args.rounds),
      durationSec: Number(args.duration),
      warmupSec: Number(args.warmup),
      serveArgs: args['serve-args'].split(' ').filter((a) => a !== ''),
      log,
    });
    const text = JSON.stringify({ a: resolve(args['before-cli']), b: cliPath(), results }, null, 2) + '\n';
    if (args.out !== undefined) await writeFile(args.out, text);
    process.stdout.write(text);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:pair: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
