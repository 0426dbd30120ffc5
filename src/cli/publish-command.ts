import { readFile } from 'node:fs/promises';
import { openSource } from '../source/open-source.js';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { parsePublishConfig, type PublishConfig } from '../config/publish-config.js';
import { processIo, type CommandIo } from '../publish/output.js';
import { publish, type PublishInput, type PublishResult } from '../publish/publish.js';
import { systemClock, type Clock } from '../time/clock.js';
import { commandUsage, COMMANDS, wantsHelp } from './usage.js';

/**
 * `pitcache publish`. Exit codes: 0 published or nothing to publish, 1 the publish failed
 * (nothing of it is served), 2 bad command line. stdout gets one summary line; errors and
 * warnings go to stderr, one line each.
 */
export async function publishCommand(argv: string[], env: NodeJS.ProcessEnv, io: CommandIo = processIo(), clock: Clock = systemClock): Promise<number> {
  if (wantsHelp(argv)) {
    await io.stdout.write(commandUsage(COMMANDS.find((c) => c.name === 'publish')!) + '\n');
    return 0;
  }
  const parsed = parsePublishConfig(argv, env);
  if (!parsed.ok) {
    await io.stderr.write(`pitcache publish: ${parsed.message}\n`);
    return 2;
  }
  const config = parsed.config;
  let source: SnapshotSource | null = null;
  try {
    const input = await readInput(config);
    source = openSource(config.source, config.s3);
    const result = await publish({
      source,
      productId: config.productId,
      dataset: config.dataset,
      input,
      rebuild: config.rebuild,
      replace: config.replace,
      seriesKey: config.seriesKey,
      publishedAtUs: Math.floor(clock.now() * 1000),
    });
    for (const warning of warnings(result)) await io.stderr.write(`pitcache publish: warning: ${warning}\n`);
    await io.stdout.write(summary(`${config.productId}/${config.dataset}`, result) + '\n');
    return 0;
  } catch (e) {
    await io.stderr.write(`pitcache publish: ${oneLine(e)}\n`);
    return 1;
  } finally {
    (source as { close?: () => void } | null)?.close?.();
  }
}

async function readInput(config: PublishConfig): Promise<PublishInput> {
  let bytes: Buffer;
  try {
    bytes = await readFile(config.input.path);
  } catch (e) {
    throw new Error(`cannot read --input ${config.input.path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  return config.input.format === 'csv' ? { format: 'csv', text: bytes.toString('utf8') } : { format: 'arrow', bytes };
}

export function summary(dataset: string, r: PublishResult): string {
  if (r.status === 'unchanged') return `no changes: ${dataset} stays at generation ${r.generation} (${count(r.rows, 'row')}); nothing published`;
  const head = `published ${dataset} generation ${r.manifest.generation}: ${count(r.manifest.rows, 'row')}`;
  if (r.mode === 'replace') return `${head}, the input's rows as they are (replace; was generation ${r.previousGeneration ?? 'none'})`;
  return `${head}, ${count(r.added, 'version')} added (${count(r.newKeys, 'new key')}), ${count(r.rewritten, 'key')} rewritten`;
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function warnings(r: PublishResult): string[] {
  if (r.status !== 'published') return [];
  const out: string[] = [];
  if (r.shadowed > 0) {
    out.push(
      `${r.shadowed} added versions are older by (str_observed_at, str_ingested_at) than their key's current version: a current query still answers the stored value`,
    );
  }
  if (!r.enforced) out.push('the store did not enforce the conditional manifest write; the manifest was checked after writing and is ours');
  return out;
}

function oneLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).replace(/\s*\n\s*/g, ' ');
}
