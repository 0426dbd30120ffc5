import { resolve } from 'node:path';
import { LocalSource } from '../../loaders/local-source.js';
import { openSource, readLocation } from '../../loaders/open-source.js';
import type { SnapshotSource } from '../../loaders/snapshot-source.js';
import { ensureDemoData, demoKeysConfig, DEMO_KEY } from '../../loaders/demo/ensure-demo.js';
import { loadKeysFile, type KeysConfig } from '../auth/keys-file.js';
import { parseServeConfig, type ServeConfig } from '../config/serve-config.js';
import { AccessLog } from '../log/access-log.js';
import { createLogger, type Logger } from '../log/logger.js';
import { startServer } from '../server/start.js';
import { serveUsage, wantsHelp } from './usage.js';

/** Exit codes: 0 clean stop, 1 runtime failure, 2 bad command line or configuration. */
export async function serveCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(serveUsage() + '\n');
    return 0;
  }
  const parsed = parseServeConfig(argv, env);
  if (!parsed.ok) return usageError(parsed.message);
  const config = parsed.config;
  const log = createLogger({ level: config.logLevel });

  let source: SnapshotSource;
  let keys: KeysConfig;
  try {
    ({ source, keys } = await openData(config, log));
  } catch (e) {
    return usageError((e as Error).message);
  }

  const accessLog = config.accessLog ? new AccessLog() : null;
  let server;
  try {
    server = await startServer({
      source,
      keys,
      host: config.host,
      port: config.port,
      log,
      accessLog,
      refreshIntervalMs: config.refreshIntervalMs,
      startupTimeoutMs: config.startupTimeoutMs,
      cacheDir: config.cacheDir ?? null,
      workers: config.workers,
      logLevel: config.logLevel,
      responseCacheBytes: Math.floor(config.responseCacheBytes / config.workers),
      rowCacheBytes: Math.floor(config.rowCacheBytes / config.workers),
    });
  } catch (e) {
    log.error('cannot start', { error: (e as Error).message });
    return 1;
  }
  if (config.data.mode === 'demo') {
    log.info(`demo ready: curl -H 'x-api-key: ${DEMO_KEY}' 'http://${config.host}:${server.port}/gbsi_eu/system_stress?country=DE'`);
  }
  await new Promise<void>((done) => {
    const stop = (signal: string) => {
      log.info('stopping', { signal });
      void server.close().then(done);
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  });
  accessLog?.close();
  return 0;
}

async function openData(config: ServeConfig, log: Logger): Promise<{ source: SnapshotSource; keys: KeysConfig }> {
  if (config.data.mode === 'demo') {
    const dir = resolve(config.data.dir);
    await ensureDemoData(dir, log);
    return { source: new LocalSource(dir), keys: demoKeysConfig() };
  }
  const s3 = config.s3;
  const keys = config.data.keys.startsWith('s3://')
    ? await loadKeysFile(config.data.keys, async (location) => Buffer.from(await readLocation(location, s3)).toString('utf8'))
    : await loadKeysFile(config.data.keys);
  const plain = keys.keys.filter((k) => k.plaintext).map((k) => k.id);
  if (plain.length > 0) log.warn('keys file holds plaintext keys: use sha256 outside local use', { key_ids: plain });
  return { source: openSource(config.data.source, s3), keys };
}

function usageError(message: string): number {
  process.stderr.write(`pitcache serve: ${message}\n`);
  return 2;
}
