/** What bench/large times: a pitcache server's start to ready, and DuckDB reading the same Parquet into a table. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { noDrainArgs } from '../lib/cli-flags.js';
import { freePort, pinned, readMemory, spawnLogged, waitFor200, type Spawned } from '../lib/proc.js';
import { serveArgv } from '../lib/server-argv.js';

export interface Served {
  readonly server: Spawned;
  readonly base: string;
  readonly readyMs: number;
  readonly rssBytes: number;
}

/** `pitcache serve --workers 1` of `source` by the build `cli`, on CPU 0 (its build threads on any core), until /readyz is 200. */
export async function serve(cli: string, source: string): Promise<Served> {
  const port = await freePort();
  const started = performance.now();
  const server = spawnLogged(pinned('0', serveArgv(cli, source, port, ['--workers', '1', '--refresh-interval', '0', ...noDrainArgs()])));
  const base = `http://127.0.0.1:${port}`;
  await waitFor200(`${base}/readyz`, server, 3_600_000, 200);
  const readyMs = performance.now() - started;
  // What stays resident once the build's scratch is gone: a few seconds after ready.
  await new Promise((r) => setTimeout(r, 3000));
  return { server, base, readyMs, rssBytes: readMemory(server.pid)?.rss ?? NaN };
}

/** DuckDB reading the folder into a table, in a process of its own (its peak RSS is its own), on every core. */
export function duckdbLoad(folder: string): Promise<{ ms: number; rssMiB: number; rows: number }> {
  const script = `
    import { DuckDBInstance } from '@duckdb/node-api';
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    const t0 = performance.now();
    await c.run("CREATE TABLE t AS SELECT * FROM read_parquet('${join(folder, '*.parquet')}')");
    const ms = performance.now() - t0;
    const rows = Number((await c.runAndReadAll('SELECT count(*) FROM t')).getRows()[0][0]);
    process.stdout.write(JSON.stringify({ ms, rows, rssMiB: process.resourceUsage().maxRSS / 1024 }));`;
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', fail);
    child.on('close', (code) => (code === 0 ? done(JSON.parse(out) as { ms: number; rssMiB: number; rows: number }) : fail(new Error(`duckdb exit ${code}`))));
  });
}
