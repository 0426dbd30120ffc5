import { resolve } from 'node:path';
import { LocalSource } from '../source/local-source.js';
import { openLocation, openSource } from '../source/open-source.js';
import type { ConditionalRead, SnapshotSource } from '../source/snapshot-source.js';
import { ensureDemoData, demoKeysConfig, DEMO_EXAMPLE, DEMO_KEY } from '../demo/ensure-demo.js';
import { parseKeysFile, type KeysConfig } from '../auth/keys-file.js';
import { KeysWatcher } from '../auth/keys-watcher.js';
import { parseServeConfig, SHUTDOWN_GRACE_SECONDS, type ServeConfig } from '../config/serve-config.js';
import { ServeSignals } from '../lifecycle/signals.js';
import { AccessLog } from '../log/access-log.js';
import { createLogger, type Logger } from '../log/logger.js';
import { OpsError } from '../ops-errors.js';
import { startServer } from '../threads/start.js';
import { activeTimers, realTimers } from '../time/timers.js';
import { serveUsage, wantsHelp } from './usage.js';

/** Bound on closing the serving threads and builders once the last request is answered. */
const CLOSE_MS = 5_000;

/** The keys file as read at start-up, and how to read it again if it changed. */
interface KeysFile {
  readonly origin: string;
  readonly read: (etag: string | null) => Promise<ConditionalRead>;
  readonly etag: string;
}

/** Exit codes: 0 clean stop, 1 runtime failure, 2 bad command line or configuration. */
export async function serveCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(serveUsage() + '\n');
    return 0;
  }
  const parsed = parseServeConfig(argv, env);
  if (!parsed.ok) return usageError(parsed.message);
  const config = parsed.config;
  const signals = new ServeSignals(
    (signal, listener) => process.on(signal, listener),
    (exitCode) => process.exit(exitCode),
  );
  const log = createLogger({ level: config.logLevel });

  let source: SnapshotSource;
  let keys: KeysConfig;
  let keysFile: KeysFile | null;
  try {
    ({ source, keys, keysFile } = await openData(config, log));
  } catch (e) {
    return usageError((e as Error).message);
  }

  const accessLog = config.accessLog ? new AccessLog() : null;
  let server;
  try {
    // The options whole (startServer reads the server's; data and s3 were for openData).
    server = await startServer({ ...config, source, keys, log, ...(accessLog === null ? {} : { accessLogTo: accessLog }) });
  } catch (e) {
    // No catalog in force (contract 13): a configuration error, like a bad keys file.
    if (e instanceof OpsError && e.code === 'catalog_invalid') {
      log.error('no catalog in force', { error: e.message });
      return usageError(e.message);
    }
    log.error('cannot start', { error: (e as Error).message });
    return 1;
  }
  if (config.data.mode === 'demo') {
    log.info(`demo ready: curl -H 'x-api-key: ${DEMO_KEY}' 'http://${config.host}:${server.port}${DEMO_EXAMPLE}'`);
  }
  const running = server;
  // Polled like the manifests; a removed key is refused within one refresh interval.
  const watcher =
    keysFile === null
      ? null
      : new KeysWatcher(
          {
            read: keysFile.read,
            origin: keysFile.origin,
            apply: (next) => {
              running.replaceKeys(next);
              warnPlaintext(next, log);
            },
            timers: realTimers,
            intervalMs: config.refreshIntervalMs,
            log: (level, event, fields) => log[level](event, fields),
          },
          keysFile.etag,
        );
  watcher?.start();

  const code = await signals.serve({
    server: running,
    drainMs: config.drainMs,
    graceMs: SHUTDOWN_GRACE_SECONDS * 1000,
    closeMs: CLOSE_MS,
    reloadKeys: watcher === null ? null : () => watcher.check(),
    log,
    // Referenced: the drain and the grace bound are the process's own work.
    timers: activeTimers,
    exitNow: (exitCode) => {
      accessLog?.close();
      process.exit(exitCode);
    },
  });
  watcher?.stop();
  accessLog?.close();
  log.info('stopped', { exit_code: code });
  // Leave now: a handle some library left open must not hold the process past its bound.
  process.exit(code);
}

async function openData(config: ServeConfig, log: Logger): Promise<{ source: SnapshotSource; keys: KeysConfig; keysFile: KeysFile | null }> {
  if (config.data.mode === 'demo') {
    const dir = resolve(config.data.dir);
    await ensureDemoData(dir, log);
    return { source: new LocalSource(dir), keys: demoKeysConfig(), keysFile: null };
  }
  const s3 = config.s3;
  const origin = config.data.keys;
  const { source: keysSource, name } = openLocation(origin, s3);
  const read = (etag: string | null): Promise<ConditionalRead> => keysSource.readIfChanged(name, etag);
  let first: ConditionalRead;
  try {
    first = await read(null);
  } catch (e) {
    throw new Error(`${origin}: cannot read keys file (${(e as Error).message})`);
  }
  if (first.status !== 'ok') throw new Error(`${origin}: cannot read keys file (not found)`);
  const keys = parseKeysFile(Buffer.from(first.bytes).toString('utf8'), origin);
  warnPlaintext(keys, log);
  return { source: openSource(config.data.source, s3), keys, keysFile: { origin, read, etag: first.etag } };
}

function warnPlaintext(keys: KeysConfig, log: Logger): void {
  const plain = keys.keys.filter((k) => k.plaintext).map((k) => k.id);
  if (plain.length > 0) log.warn('keys file holds plaintext keys: use sha256 outside local use', { key_ids: plain });
}

function usageError(message: string): number {
  process.stderr.write(`pitcache serve: ${message}\n`);
  return 2;
}
