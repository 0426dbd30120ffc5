/** The argv of every server a bench starts: pitcache's `serve` and the uWS ceiling, each written once. */
import { join } from 'node:path';
import { distScript } from './paths.js';

/** `node` (with `nodeArgs`) and what it needs to run `cli`: a built main.js as it is, a source main.ts through tsx (tests). */
function nodeFor(cli: string, nodeArgs: readonly string[]): string[] {
  return [process.execPath, ...nodeArgs, ...(cli.endsWith('.ts') ? ['--import', 'tsx'] : []), cli];
}

export interface ServeArgvOptions {
  /** the keys file; default `dir/keys.json` */
  readonly keys?: string;
  /** node's own flags (--cpu-prof ...) */
  readonly nodeArgs?: readonly string[];
}

/** `pitcache serve` of the folder `dir` (its keys in `dir/keys.json`) on `port`, quiet: the argv every bench server starts with. */
export function serveArgv(cli: string, dir: string, port: number, extraArgs: readonly string[] = [], o: ServeArgvOptions = {}): string[] {
  return [
    ...nodeFor(cli, o.nodeArgs ?? []),
    'serve',
    '--source',
    dir,
    '--keys',
    o.keys ?? join(dir, 'keys.json'),
    '--port',
    String(port),
    '--no-access-log',
    '--log-level',
    'warn',
    ...extraArgs,
  ];
}

/** bench/servers/ceiling-server.ts (built): uWS answering every request with one fixed body of `bytes`, on `workers` threads. */
export function ceilingArgv(port: number, bytes: number, workers: number): string[] {
  return [process.execPath, distScript('bench/servers/ceiling-server.js'), '--port', String(port), '--bytes', String(bytes), '--workers', String(workers)];
}
