import { openSource } from '../source/open-source.js';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { parseAsofConfig } from '../config/asof-config.js';
import { writeAsOfAnswer } from './as-of-answer.js';
import { processIo, type CommandIo } from '../publish/output.js';
import { systemClock, type Clock } from '../time/clock.js';
import { commandUsage, COMMANDS, wantsHelp } from './usage.js';

/**
 * `pitcache asof`: the API's answer rebuilt from the stored files, on stdout. Exit codes:
 * 0 written, 1 the dataset cannot be read or is refused, 2 bad command line or query.
 */
export async function asofCommand(argv: string[], env: NodeJS.ProcessEnv, io: CommandIo = processIo(), clock: Clock = systemClock): Promise<number> {
  if (wantsHelp(argv)) {
    await io.stdout.write(commandUsage(COMMANDS.find((c) => c.name === 'asof')!) + '\n');
    return 0;
  }
  const parsed = parseAsofConfig(argv, env);
  if (!parsed.ok) {
    await io.stderr.write(`pitcache asof: ${parsed.message}\n`);
    return 2;
  }
  const config = parsed.config;
  let source: SnapshotSource | null = null;
  try {
    source = openSource(config.source, config.s3);
    await writeAsOfAnswer({
      source,
      productId: config.productId,
      dataset: config.dataset,
      rawQuery: config.rawQuery,
      format: config.format,
      out: io.stdout,
      clock,
    });
    return 0;
  } catch (e) {
    await io.stderr.write(`pitcache asof: ${(e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ')}\n`);
    return 1;
  } finally {
    (source as { close?: () => void } | null)?.close?.();
  }
}
