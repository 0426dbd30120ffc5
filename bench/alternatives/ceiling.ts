/**
 * The ceiling alternative (issue 11.1): bench/servers/ceiling-server.ts with a fixed body of
 * `bytes` (the workload's mean answer size, measured from pitcache's answers in the same
 * run) and the same worker count as the pitcache row it is compared with.
 */
import { HttpServerAlternative } from './http-server.js';
import { ceilingArgv } from '../lib/server-argv.js';

export interface CeilingOptions {
  readonly bytes: number;
  readonly workers: number;
  readonly serverCpus?: string;
  readonly wrkCpus?: string;
  readonly wrkThreads?: number;
}

export function ceilingAlternative(o: CeilingOptions): HttpServerAlternative {
  return new HttpServerAlternative({
    name: `ceiling (uWS, fixed ${o.bytes} B body, ${o.workers} worker${o.workers === 1 ? '' : 's'})`,
    command: (_data, port) => ceilingArgv(port, o.bytes, o.workers),
    ...(o.serverCpus === undefined ? {} : { serverCpus: o.serverCpus }),
    ...(o.wrkCpus === undefined ? {} : { wrkCpus: o.wrkCpus }),
    ...(o.wrkThreads === undefined ? {} : { wrkThreads: o.wrkThreads }),
    version: process.version,
    note: 'no lookup, no encoding: HTTP and bytes only',
    // its /metrics has the allocation and collections of its threads, as pitcache's has
    gcMetrics: true,
  });
}
