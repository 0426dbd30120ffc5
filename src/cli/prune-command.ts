import { openSource } from '../source/open-source.js';
import type { PrunableSource } from '../source/snapshot-source.js';
import { parsePruneConfig } from '../config/prune-config.js';
import { processIo, type CommandIo } from '../publish/output.js';
import { prune, type PrunedDataset } from '../publish/prune.js';
import { systemClock, type Clock } from '../time/clock.js';
import { commandUsage, COMMANDS, wantsHelp } from './usage.js';

/**
 * `pitcache prune`. Exit codes: 0 done (or nothing to remove), 1 the source failed (what
 * was removed before stays removed; the live generation is never touched), 2 bad command
 * line. stdout: one line per path removed (or that would be, with --dry-run), then one
 * summary line per dataset.
 */
export async function pruneCommand(argv: string[], env: NodeJS.ProcessEnv, io: CommandIo = processIo(), clock: Clock = systemClock): Promise<number> {
  if (wantsHelp(argv)) {
    await io.stdout.write(commandUsage(COMMANDS.find((c) => c.name === 'prune')!) + '\n');
    return 0;
  }
  const parsed = parsePruneConfig(argv, env);
  if (!parsed.ok) {
    await io.stderr.write(`pitcache prune: ${parsed.message}\n`);
    return 2;
  }
  const config = parsed.config;
  let source: PrunableSource | null = null;
  try {
    source = openSource(config.source, config.s3);
    const done = await prune({
      source,
      datasets: config.datasets,
      keep: config.keep,
      olderThanMs: config.olderThanMs,
      nowMs: clock.now(),
      dryRun: config.dryRun,
    });
    for (const d of done) {
      for (const path of d.paths) await io.stdout.write(`${config.dryRun ? 'would remove' : 'removed'} ${path}\n`);
      await io.stdout.write(summary(d, config.dryRun) + '\n');
    }
    return 0;
  } catch (e) {
    await io.stderr.write(`pitcache prune: ${(e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ')}\n`);
    return 1;
  } finally {
    (source as { close?: () => void } | null)?.close?.();
  }
}

export function summary(d: PrunedDataset, dryRun: boolean): string {
  const n = d.generations.length;
  const what = n === 0 ? 'no generations' : `${n} generation${n === 1 ? '' : 's'} (${d.generations.join(', ')}), ${d.paths.length} objects, ${d.bytes} bytes`;
  return `${d.dataset}: ${dryRun ? 'would remove' : 'removed'} ${what}; live generation ${d.liveGeneration} kept`;
}
