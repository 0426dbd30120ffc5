/**
 * Topology 1: three replicas behind HAProxy round-robin, Prometheus scraping them. While
 * the request loop runs: a new generation is published, the replicas are rolled one by one,
 * cursor chains begun before the publish are finished after the roll (on processes that
 * never held their generation), and a key is revoked. Then, under a load of its own, one
 * replica is killed with SIGKILL (replica-kill.ts).
 */
import { checkWhole, get, wholePath } from './api-client.js';
import { CursorChain } from './cursor-chain.js';
import { idOf } from './generations.js';
import { SHIPPED_BACKEND } from './haproxy-config.js';
import type { Haproxy } from './haproxy.js';
import { LoadLoop } from './load-loop.js';
import { killUnderLoad } from './replica-kill.js';
import { accessLogsFlushed, replicasOf, until } from './probes.js';
import { Prometheus } from './prometheus.js';
import type { Replica } from './replica.js';
import type { Verdicts } from './verdicts.js';
import { DRAIN_SECONDS, GRID, KEYS, REFRESH_SECONDS, US, type World } from './world.js';

const DATASETS = [GRID, US];
/** Slack on "within one refresh interval": the poll that notices, the request that sees it, a loaded machine. */
const SLACK_MS = 1500;
const HELD_CHAINS = 4;

export async function replicatedScenario(world: World, v: Verdicts): Promise<void> {
  await world.writeKeys(['loop', 'revoked', 'ops']);
  await world.publish(DATASETS, 1);
  const replicas = await Promise.all(['r1', 'r2', 'r3'].map((n) => world.replica(n)));
  await Promise.all(replicas.map((r) => r.start()));
  const lb = await world.balancer([{ pathPrefixes: [], servers: replicas.map((r) => ({ name: r.name, port: r.port })) }]);
  const prom = await Prometheus.start(
    world.children,
    replicas.map((r) => `127.0.0.1:${r.metricsPort}`),
  );
  v.step(`3 replicas ready (ports ${replicas.map((r) => r.port).join(', ')}), haproxy at ${lb.url}, prometheus at ${prom.url}`);
  const loop = new LoadLoop(
    { base: lb.url, key: KEYS.loop, datasets: DATASETS, clients: 4, maxRequests: 60_000, deadlineMs: 150_000, chainLimit: 16, pageGapMs: 25 },
    world.expect,
  );
  try {
    await run(world, v, replicas, lb, prom, loop);
  } finally {
    await loop.stop();
    await lb.stop();
    await prom.stop();
    await Promise.all(replicas.filter((r) => r.running).map((r) => r.stop()));
  }
}

/** Runs a phase; a phase that throws is a failed check, and the scenario goes on. */
async function phase(v: Verdicts, name: string, fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    v.error(name, e);
  }
}

async function run(world: World, v: Verdicts, replicas: Replica[], lb: Haproxy, prom: Prometheus, loop: LoadLoop): Promise<void> {
  const upMs = await prom.waitUp(3);
  v.check('prometheus scrapes every replica', true, `up == 1 for all 3 /metrics targets ${upMs} ms after it started`);
  for (const r of replicas) await until(r, wholePath(GRID), KEYS.revoked, { status: 200 }, 5000);

  // Chains begun at generation 1 and finished only after every replica was restarted.
  const held = Array.from({ length: HELD_CHAINS }, () => new CursorChain(lb.url, KEYS.loop, GRID, 9));
  for (const c of held) await c.step();

  loop.start();
  await new Promise((r) => setTimeout(r, 2000));

  await phase(v, 'publish and convergence', () => publishAndConverge(world, v, replicas, held));
  await new Promise((r) => setTimeout(r, 1000));
  await phase(v, 'rolling restart', () => roll(world, v, replicas, lb));
  await phase(v, 'cursor chains begun before the publish finish after the roll', () => finishHeld(world, v, replicas, held));
  await phase(v, 'generation=N answers generation N on every replica (contract 12)', () => pinnedGenerations(world, v, replicas));
  await phase(v, 'key revocation', () => revoke(world, v, replicas, lb));
  await new Promise((r) => setTimeout(r, 1000));
  await loop.stop();
  await loopVerdicts(v, loop, replicas, lb);
  await phase(v, 'SIGKILL of a replica under load', () => killUnderLoad(world, v, replicas, lb));
  await phase(v, 'prometheus after the roll', () => promVerdicts(v, prom));
}

async function finishHeld(world: World, v: Verdicts, replicas: Replica[], held: CursorChain[]): Promise<void> {
  for (const c of held) await c.finish();
  const heldGens = held.map((c) => c.check(world.expect));
  await accessLogsFlushed();
  const heldSpread = held.map((c) => replicasOf(replicas, c.recordIds).size);
  v.check(
    'cursor chains begun before the publish finish after the roll',
    heldGens.every((g) => g === 1),
    `${held.length} chains of ${held[0]!.pages} pages: generations ${heldGens.join(', ')}, rows equal generation 1's; replicas per chain ${heldSpread.join(', ')} (every page after the roll on a process started at generation 2)`,
  );
}

async function publishAndConverge(world: World, v: Verdicts, replicas: Replica[], held: CursorChain[]): Promise<void> {
  const published = await world.publish(DATASETS, 2);
  // One more page of each held chain while the replicas disagree about the live generation.
  for (const c of held) await c.step();
  const bound = REFRESH_SECONDS * 1000 + 10_000;
  // Measured from the moment the new manifest could be read at the source.
  const times = await Promise.all(
    replicas.flatMap((r) =>
      DATASETS.map(async (d) => {
        await until(r, wholePath(d), KEYS.loop, { generation: 2 }, bound);
        return { r, d, ms: Date.now() - published.get(idOf(d))! };
      }),
    ),
  );
  const detail: string[] = [];
  let ok = true;
  for (const { r, d, ms } of times) {
    const load = r.loads.find((l) => l.dataset === idOf(d) && l.generation === 2)?.loadMs ?? 0;
    const limit = REFRESH_SECONDS * 1000 + load + SLACK_MS;
    ok &&= ms <= limit;
    detail.push(`${r.name} ${idOf(d)} ${ms} ms (load ${load} ms)`);
  }
  v.check(`replicas converge on generation 2 within one refresh interval (${REFRESH_SECONDS} s + load + ${SLACK_MS} ms)`, ok, detail.join('; '));
}

async function roll(world: World, v: Verdicts, replicas: Replica[], lb: Haproxy): Promise<void> {
  const detail: string[] = [];
  let ok = true;
  for (const r of replicas) {
    const [down, end] = await Promise.all([lb.waitStatus(r.name, 'DOWN', 15_000), r.stop()]);
    ok &&= end.code === 0 && down < DRAIN_SECONDS * 1000;
    const started = Date.now();
    await r.start();
    const ready = Date.now() - started;
    const up = await lb.waitStatus(r.name, 'UP', 15_000);
    const live = checkWhole(world.expect, GRID, await get(r.url, wholePath(GRID), KEYS.loop));
    ok &&= live === 2;
    detail.push(
      `${r.name}: out of haproxy ${down} ms after SIGTERM, exit ${end.code ?? end.signal} after ${end.ms} ms, ready ${ready} ms, back in ${up} ms, serving generation ${live}`,
    );
  }
  v.check(`rolling restart: each replica leaves the balancer within its drain (${DRAIN_SECONDS} s), exits 0 and comes back`, ok, detail.join('; '));
}

/** Contract 12: `generation=N` on any replica answers generation N, loading it when needed. */
async function pinnedGenerations(world: World, v: Verdicts, replicas: Replica[]): Promise<void> {
  const detail: string[] = [];
  let ok = true;
  for (const r of replicas) {
    for (const g of [1, 2]) {
      for (const d of DATASETS) {
        const a = await get(r.url, `${wholePath(d)}&generation=${g}`, KEYS.loop);
        let got: number | string;
        try {
          got = checkWhole(world.expect, d, a);
        } catch (e) {
          got = (e as Error).message;
        }
        ok &&= got === g;
        if (got !== g) detail.push(`${r.name} ${idOf(d)} generation=${g}: ${got}`);
      }
    }
  }
  v.check(
    'generation=N answers generation N on every replica (contract 12)',
    ok,
    ok ? `generations 1 and 2 of both datasets on ${replicas.length} replicas` : detail.join('; '),
  );
}

async function revoke(world: World, v: Verdicts, replicas: Replica[], lb: Haproxy): Promise<void> {
  await world.writeKeys(['loop', 'ops']);
  const bound = REFRESH_SECONDS * 1000 + SLACK_MS;
  const times = await Promise.all(replicas.map((r) => until(r, wholePath(US), KEYS.revoked, { status: 401 }, bound + 10_000)));
  const through = await Promise.all(Array.from({ length: 6 }, () => get(lb.url, wholePath(US), KEYS.revoked)));
  v.check(
    `the revoked key is refused within one interval (${REFRESH_SECONDS} s + ${SLACK_MS} ms)`,
    times.every((t) => t <= bound) && through.every((a) => a.status === 401),
    `401 on ${replicas.map((r, i) => `${r.name} after ${times[i]} ms`).join(', ')}; through the balancer: ${through.map((a) => a.status).join(',')}`,
  );
}

async function loopVerdicts(v: Verdicts, loop: LoadLoop, replicas: Replica[], lb: Haproxy): Promise<void> {
  await accessLogsFlushed();
  const spread = loop.chains.map((c) => replicasOf(replicas, c.recordIds));
  const unknown = spread.filter((s) => s.has('?')).length;
  const multi = spread.filter((s) => s.size > 1).length;
  const stats = (await lb.stats()).filter((s) => s.backend === SHIPPED_BACKEND);
  v.fact('loop', `${loop.requests} requests, ${loop.chains.length} complete chains, 4 clients`);
  v.fact('whole answers by generation', [...loop.answersByGeneration].map(([k, n]) => `${k}: ${n}`).join(', '));
  v.fact('chains by generation', [...loop.chainsByGeneration].map(([k, n]) => `${k}: ${n}`).join(', '));
  v.fact('requests per replica (access logs)', replicas.map((r) => `${r.name} ${r.requestsLogged} over ${r.starts} processes`).join(', '));
  v.fact('haproxy retries / redispatches', stats.map((s) => `${s.server} ${s.retries}/${s.redispatches}`).join(', '));
  v.check(
    'zero failed requests through the balancer',
    loop.failures.length === 0,
    `${loop.failures.length} of ${loop.requests}${loop.failures.length > 0 ? ': ' + loop.failures.slice(0, 5).join(' | ') : ''}`,
  );
  const gens = new Set([...loop.answersByGeneration.keys()].map((k) => k.split(' ')[1]));
  v.check(
    'every answer matched exactly one generation, and the loop saw both',
    loop.failures.length === 0 && gens.has('1') && gens.has('2'),
    `generations seen: ${[...gens].join(', ')}`,
  );
  v.check(
    'every cursor chain returned exactly one generation, pages landing on different replicas',
    loop.failures.length === 0 && multi > 0 && unknown === 0,
    `${loop.chains.length} chains, ${multi} answered by more than one replica, ${unknown} with a page no replica logged`,
  );
}

async function promVerdicts(v: Verdicts, prom: Prometheus): Promise<void> {
  const upMs = await prom.waitUp(3);
  const gens = await prom.waitAll('pitcache_dataset_generation', 3 * DATASETS.length, '2');
  const requests = await prom.query('sum by (instance) (pitcache_requests_total)');
  v.check(
    'prometheus scrapes all three replicas after the roll',
    requests.length === 3 && requests.every((s) => Number(s.value[1]) > 0),
    `up ${upMs} ms; pitcache_dataset_generation = 2 for ${gens.length} series; requests_total by instance: ${requests.map((s) => `${s.metric['instance']} ${s.value[1]}`).join(', ')}`,
  );
}
