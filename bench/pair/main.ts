/**
 * `npm run bench:pair`: this build (B) against another (A) over HTTP, in paired rounds
 * (pair.ts), on the bench's main data set (bench/.data, built here if missing):
 *
 *   npm run bench:pair -- --before-cli /tmp/base/dist/src/cli/main.js [--rounds 4] [--duration 5]
 *     [--warmup 3] [--workloads walk-forward-loop,walk-forward-series,repeated] [--quick]
 *     [--serve-args "--row-cache-mb 1024"] [--out FILE]
 *
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
import { buildWorkloads, writePathsFile, WORKLOADS } from '../workloads.js';
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
    },
  });
  if (args['before-cli'] === undefined) throw new Error('--before-cli <the other build main.js> is required');
  const names = args.workloads.split(',') as WorkloadName[];
  const unknown = names.filter((w) => !WORKLOADS.includes(w));
  if (unknown.length > 0) throw new Error(`unknown workload(s) ${unknown.join(', ')}: one of ${WORKLOADS.join(', ')}`);
  const log = (m: string): void => void process.stderr.write(`[pair ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
  const data = await ensureData(join(repoRoot(), 'bench/.data'), 'main', args.quick, log);
  const all = buildWorkloads(planFor('main', args.quick), { count: args.quick ? 2000 : 20000, pageWalkCount: args.quick ? 100 : 1000 });
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-pair-'));
  try {
    const paths: Record<string, string> = {};
    for (const w of names) {
      paths[w] = join(dir, `${w}.paths`);
      await writePathsFile(paths[w]!, all[w]);
    }
    const results = await runPair({
      cliA: resolve(args['before-cli']),
      cliB: cliPath(),
      dataDir: data.sourceDir,
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
