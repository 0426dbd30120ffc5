/** pitcache itself: `node dist/src/cli/main.js serve` on the generated source, driven by wrk. */
import { HttpServerAlternative } from './http-server.js';
import { cliServeKnows, noDrainArgs } from '../lib/cli-flags.js';
import { cliPath } from '../lib/paths.js';
import { serveArgv } from '../lib/server-argv.js';

export interface PitcacheOptions {
  /** --workers N; omitted when the CLI has no such flag */
  readonly workers?: number;
  readonly serverCpus?: string;
  readonly wrkCpus?: string;
  readonly wrkThreads?: number;
  /** instead of the data set's folder (e.g. s3://bucket/prefix) */
  readonly source?: string;
  readonly keys?: string;
  readonly extraArgs?: readonly string[];
  /** flags for node itself, e.g. --cpu-prof */
  readonly nodeArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  readonly name?: string;
}

/** Whether this build of the CLI knows `serve --workers`. */
export function cliHasWorkers(): boolean {
  return cliServeKnows('--workers');
}

export function pitcacheAlternative(o: PitcacheOptions = {}): HttpServerAlternative {
  const workers = o.workers !== undefined && cliHasWorkers() ? o.workers : undefined;
  return new HttpServerAlternative({
    name: o.name ?? `pitcache (uWS${workers === undefined ? '' : `, ${workers} worker${workers === 1 ? '' : 's'}`})`,
    command: (data, port) =>
      serveArgv(
        cliPath(),
        o.source ?? data.sourceDir,
        port,
        [
          '--host',
          '127.0.0.1',
          '--refresh-interval',
          '0',
          ...(workers === undefined ? [] : ['--workers', String(workers)]),
          ...noDrainArgs(),
          ...(o.extraArgs ?? []),
        ],
        { keys: o.keys ?? data.keysPath, nodeArgs: o.nodeArgs ?? [] },
      ),
    ...(o.env === undefined ? {} : { env: o.env }),
    ...(o.serverCpus === undefined ? {} : { serverCpus: o.serverCpus }),
    ...(o.wrkCpus === undefined ? {} : { wrkCpus: o.wrkCpus }),
    ...(o.wrkThreads === undefined ? {} : { wrkThreads: o.wrkThreads }),
    version: process.version,
    gcMetrics: true,
  });
}
