/**
 * The cluster test (issue 10, item 6): real pitcache replicas (the built CLI) on
 * loopback, one s3rver as the only source of truth, Debian's HAProxy in front and Debian's
 * Prometheus scraping them. Two topologies, run one after the other:
 *   1. three replicas round-robin: publish, rolling restart, cursor chains across
 *      replicas and generations, key revocation, all under a checked request loop;
 *   2. two dataset groups on two replica sets, routed by path.
 * Prints a summary of every check with its figures; exits 1 when any failed. Every child
 * process is killed and every temp folder removed on any exit; the whole run is bounded.
 *
 *   npm run test:cluster        (builds first; installs haproxy and prometheus when missing)
 */
import { existsSync } from 'node:fs';
import { cliPath } from '../bench/lib/paths.js';
import { Children } from './cluster/children.js';
import { haproxyVersion } from './cluster/haproxy.js';
import { prometheusVersion } from './cluster/prometheus.js';
import { replicatedScenario } from './cluster/replicated-scenario.js';
import { shardedScenario } from './cluster/sharded-scenario.js';
import { Verdicts } from './cluster/verdicts.js';
import { World } from './cluster/world.js';

const BOUND_MS = 6 * 60_000;

async function main(): Promise<number> {
  const children = new Children();
  const v = new Verdicts();
  const watchdog = setTimeout(() => {
    process.stderr.write(`cluster test: not done after ${BOUND_MS / 1000} s; stopping\n${v.summary()}`);
    children.cleanUp();
    process.exit(1);
  }, BOUND_MS);
  try {
    if (!existsSync(cliPath())) throw new Error(`${cliPath()} is missing: run npm run build first`);
    v.fact('haproxy', haproxyVersion());
    v.fact('prometheus', prometheusVersion());
    v.fact('node', process.version);
    const world = await World.start(children);
    try {
      await replicatedScenario(world, v);
    } catch (e) {
      v.error('replicated topology', e);
    }
    try {
      await shardedScenario(world, v);
    } catch (e) {
      v.error('sharded topology', e);
    }
    world.s3.close();
  } catch (e) {
    v.error('set-up', e);
  } finally {
    clearTimeout(watchdog);
    children.cleanUp();
  }
  process.stdout.write(v.summary());
  return v.failed === 0 ? 0 : 1;
}

process.exitCode = await main();
