/* global process */
// wrk with the bench's paths script on CPU 1, 64 connections, against a server in this very
// process: run in a child and awaited, so the server keeps answering on this thread's event
// loop. Resolves to the requests wrk counted. Shared by in-process.mjs (HTTP=) and
// transport-floor.mjs.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';

const here = resolve(import.meta.dirname, '../..');
const paths = process.env.PATHS_DIR ?? `${here}/bench/.data/paths`;

/** wrk for `seconds` on http://127.0.0.1:port with workload's paths file and the bench key. */
export function wrkPaths(port, workload, seconds) {
  const args = [
    '-c',
    '1',
    'wrk',
    '-t1',
    '-c64',
    `-d${seconds}s`,
    '-s',
    `${here}/bench/wrk/paths.lua`,
    `http://127.0.0.1:${port}`,
    '--',
    `${paths}/${workload}.paths`,
    'pitcache-bench-key',
    'list',
  ];
  return new Promise((ok, fail) =>
    execFile('taskset', args, { encoding: 'utf8' }, (err, out) => (err ? fail(err) : ok(Number(/"requests":(\d+)/.exec(out)?.[1] ?? NaN)))),
  );
}
