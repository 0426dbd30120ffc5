import { openSource } from '../source/open-source.js';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { asofQuery, parseAsofConfig } from '../config/asof-config.js';
import { catalogInForce } from '../catalog/catalog-source.js';
import { writeAsOfAnswer } from './as-of-answer.js';
import { processIo, type CommandIo } from '../publish/output.js';
import { systemClock, type Clock } from '../time/clock.js';
import { commandUsage, COMMANDS, wantsHelp } from './usage.js';

/**
 * `pitcache asof`: the API's answer rebuilt from the stored files, on stdout, under the
 * catalog in force at the source (contract 13). Exit codes: 0 written, 1 the catalog or the
 * dataset cannot be read or is refused, 2 bad command line or query (a product, dataset or
 * filter the catalog lacks included).
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
    const { catalog } = await catalogInForce(source);
    const query = asofQuery(config, catalog);
    if (!query.ok) {
      await io.stderr.write(`pitcache asof: ${query.message}\n`);
      return 2;
    }
    await writeAsOfAnswer({
      source,
      catalog,
      productId: config.productId,
      dataset: config.dataset,
      rawQuery: query.rawQuery,
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
