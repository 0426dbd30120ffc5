import { readFile } from 'node:fs/promises';
import { BUILTIN_CATALOG } from '../catalog/builtin.js';
import { catalogBytes, parseCatalogDocument } from '../catalog/catalog-document.js';
import { readCatalog, writeCatalog } from '../catalog/catalog-source.js';
import { parseCatalogConfig } from '../config/catalog-config.js';
import { OpsError } from '../ops-errors.js';
import { processIo, type CommandIo } from '../publish/output.js';
import { openSource } from '../source/open-source.js';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { commandUsage, COMMANDS, wantsHelp } from './usage.js';

/**
 * `pitcache catalog` (contract 13): prints the catalog in force at a source (its
 * catalog.json, or the built-in one when it has none), the built-in one (`--builtin`), or
 * validates a file and writes it as the source's catalog.json (`--set`) with a conditional
 * write. Exit codes: 0 done, 1 the source failed, someone else changed catalog.json
 * meanwhile, or the source's catalog.json is invalid; 2 bad command line or an invalid
 * file to set (nothing written).
 */
export async function catalogCommand(argv: string[], env: NodeJS.ProcessEnv, io: CommandIo = processIo()): Promise<number> {
  if (wantsHelp(argv)) {
    await io.stdout.write(commandUsage(COMMANDS.find((c) => c.name === 'catalog')!) + '\n');
    return 0;
  }
  const parsed = parseCatalogConfig(argv, env);
  const fail = async (code: number, message: string): Promise<number> => {
    await io.stderr.write(`pitcache catalog: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return code;
  };
  if (!parsed.ok) return fail(2, parsed.message);
  const config = parsed.config;
  if (config.mode === 'builtin') {
    await io.stdout.write(Buffer.from(catalogBytes(BUILTIN_CATALOG)).toString('utf8'));
    return 0;
  }
  let catalog = null;
  if (config.file !== null) {
    try {
      catalog = parseCatalogDocument(await readFile(config.file));
    } catch (e) {
      return fail(2, `${config.file}: ${(e as Error).message}`);
    }
  }
  let source: SnapshotSource | null = null;
  try {
    source = openSource(config.source, config.s3);
    const read = await readCatalog(source, null);
    if (catalog === null) {
      if (read.status === 'invalid') return fail(1, `${config.source}: ${read.error.message}`);
      if (read.status === 'unchanged') return fail(1, 'an unconditional read answered unchanged');
      await io.stdout.write(Buffer.from(catalogBytes(read.catalog)).toString('utf8'));
      return 0;
    }
    // The catalog.json being replaced (valid or not) is the one the write is conditional on.
    const etag = read.status === 'ok' || read.status === 'invalid' ? read.etag : null;
    const { enforced } = await writeCatalog(source, catalog, etag);
    const datasets = catalog.entries.length;
    await io.stdout.write(
      `catalog.json written to ${config.source}: ${catalog.products.length} product${catalog.products.length === 1 ? '' : 's'}, ${datasets} dataset${datasets === 1 ? '' : 's'}${enforced ? '' : ' (the store does not enforce conditional writes: checked after)'}\n`,
    );
    return 0;
  } catch (e) {
    return fail(1, e instanceof OpsError || e instanceof Error ? e.message : String(e));
  } finally {
    (source as { close?: () => void } | null)?.close?.();
  }
}
