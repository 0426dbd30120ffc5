/** The same API handler over node:http (bench/servers/node-http-server.ts): the HTTP layer's worth. */
import { HttpServerAlternative } from './http-server.js';
import { distScript } from '../lib/paths.js';

export interface NodeHttpOptions {
  readonly serverCpus?: string;
  readonly wrkCpus?: string;
  readonly wrkThreads?: number;
}

export function nodeHttpAlternative(o: NodeHttpOptions = {}): HttpServerAlternative {
  return new HttpServerAlternative({
    name: 'same handler over node:http',
    command: (data, port) => [
      process.execPath,
      distScript('bench/servers/node-http-server.js'),
      '--source',
      data.sourceDir,
      '--keys',
      data.keysPath,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--log-level',
      'warn',
      '--refresh-interval',
      '0',
    ],
    ...(o.serverCpus === undefined ? {} : { serverCpus: o.serverCpus }),
    ...(o.wrkCpus === undefined ? {} : { wrkCpus: o.wrkCpus }),
    ...(o.wrkThreads === undefined ? {} : { wrkThreads: o.wrkThreads }),
    version: process.version,
    note: 'one thread',
  });
}
