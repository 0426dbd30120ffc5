import { constants } from 'node:fs';
import { access, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { asyncBufferFromFile } from 'hyparquet';
import { openSource } from '../source/open-source.js';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { inputFormatOf, parsePublishConfig, type InputFormat, type PublishConfig } from '../config/publish-config.js';
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
      partBytes: config.partBytes,
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

/** `--input`: one file, or every .arrow, .csv and .parquet file of a folder in name order. */
async function readInput(config: PublishConfig): Promise<PublishInput | PublishInput[]> {
  const { path, format } = config.input;
  const fail = (e: unknown): never => {
    throw new Error(`cannot read --input ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  };
  const info = await stat(path).catch(fail);
  if (!info.isDirectory()) {
    if (format === null) throw new Error(`--input ${path} must name a .arrow (or .arrows, .ipc, .feather), .csv or .parquet file, or a folder of them`);
    return readOne(path, format);
  }
  const names = (await readdir(path).catch(fail)).filter((n) => inputFormatOf(n) !== null).sort();
  if (names.length === 0) throw new Error(`--input ${path} holds no .arrow, .csv or .parquet file`);
  const out: PublishInput[] = [];
  for (const n of names) out.push(await readOne(join(path, n), inputFormatOf(n)!));
  return out;
}

async function readOne(path: string, format: InputFormat): Promise<PublishInput> {
  const name = basename(path);
  // Every format is read a batch at a time from the file (contract 14), never whole.
  if (format === 'parquet') return { format, file: await asyncBufferFromFile(path), name };
  await access(path, constants.R_OK).catch((e: NodeJS.ErrnoException) => {
    throw new Error(`cannot read --input ${path}: ${e.code ?? e.message}`);
  });
  return format === 'csv' ? { format, path, name } : { format, path, name };
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
