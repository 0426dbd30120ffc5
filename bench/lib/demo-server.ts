/** A built pitcache serving a private copy of the demo data set (a bench may publish into it). */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDemoData } from '../../src/demo/ensure-demo.js';
import { silentLogger } from '../../src/log/logger.js';
import { noDrainArgs } from './cli-flags.js';
import { cliPath, repoRoot } from './paths.js';
import { freePort, spawnLogged, waitFor200, type Spawned } from './proc.js';
import { serveArgv } from './server-argv.js';

export interface DemoServer {
  readonly dir: string;
  readonly port: number;
  readonly base: string;
  readonly server: Spawned;
  stop(): Promise<void>;
}

/** `extraArgs` are serve flags after --source, --keys, --port, --no-access-log and --log-level warn; `cli` another build's main.js. */
export async function startDemoServer(name: string, extraArgs: readonly string[], cli = cliPath()): Promise<DemoServer> {
  const demo = join(repoRoot(), '.demo-data');
  await ensureDemoData(demo, silentLogger);
  const dir = await mkdtemp(join(tmpdir(), `pitcache-${name}-`));
  await cp(demo, dir, { recursive: true });
  const port = await freePort();
  const server = spawnLogged(serveArgv(cli, dir, port, [...noDrainArgs(), ...extraArgs]));
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${base}/readyz`, server, 120_000);
  } catch (e) {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    dir,
    port,
    base,
    server,
    async stop() {
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
