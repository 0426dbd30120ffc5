/**
 * Topology 2: two dataset groups on two replica sets (`--datasets gbsi_us/*` and the rest),
 * HAProxy routing by path. Every answer for a group comes from its own set; a dataset of
 * the other group asked of a set directly is the contract's 404 naming what it serves.
 */
import { PRODUCTS } from '../../src/catalog/products.js';
import { get, wholePath } from './api-client.js';
import { idOf, pathOf, type ClusterDataset } from './generations.js';
import { LoadLoop } from './load-loop.js';
import { accessLogsFlushed, answeredBy } from './probes.js';
import type { Replica } from './replica.js';
import type { Verdicts } from './verdicts.js';
import { GRID, KEYS, US, type World } from './world.js';

const US_GROUP = 'gbsi_us/*';
/** "The rest": every other product, as the selection syntax writes it. */
const REST_GROUP = PRODUCTS.filter((p) => p.id !== 'gbsi_us')
  .map((p) => `${p.id}/*`)
  .join(',');

export async function shardedScenario(world: World, v: Verdicts): Promise<void> {
  const usSet = await Promise.all(['us1', 'us2'].map((n) => world.replica(n, US_GROUP)));
  const restSet = await Promise.all(['rest1', 'rest2'].map((n) => world.replica(n, REST_GROUP)));
  await Promise.all([...usSet, ...restSet].map((r) => r.start()));
  const lb = await world.balancer([
    { pathPrefixes: ['/gbsi_us/'], servers: usSet.map((r) => ({ name: r.name, port: r.port })) },
    { pathPrefixes: [], servers: restSet.map((r) => ({ name: r.name, port: r.port })) },
  ]);
  v.step(`sharded: ${usSet.length} replicas for ${US_GROUP}, ${restSet.length} for ${REST_GROUP}, haproxy at ${lb.url}`);
  try {
    const loop = new LoadLoop(
      { base: lb.url, key: KEYS.loop, datasets: [GRID, US], clients: 4, maxRequests: 400, deadlineMs: 30_000, chainLimit: 16, pageGapMs: 0 },
      world.expect,
    );
    loop.start();
    await loop.finished();
    await accessLogsFlushed();
    v.check(
      'sharded: zero failed requests, every answer one generation',
      loop.failures.length === 0 && loop.requests > 0,
      `${loop.requests} requests (${loop.chains.length} chains): ${[...loop.answersByGeneration].map(([k, n]) => `${k}: ${n}`).join(', ')}${loop.failures.length > 0 ? '; ' + loop.failures.slice(0, 5).join(' | ') : ''}`,
    );
    routedToItsSet(v, loop, usSet, restSet);
    await wrongSet(v, usSet[0]!, GRID, US_GROUP);
    await wrongSet(v, restSet[0]!, US, REST_GROUP);
  } finally {
    await lb.stop();
    await Promise.all([...usSet, ...restSet].filter((r) => r.running).map((r) => r.stop()));
  }
}

/** Each answer (whole or chain page) was logged by a replica of its dataset's set, and every replica answered some. */
function routedToItsSet(v: Verdicts, loop: LoadLoop, usSet: Replica[], restSet: Replica[]): void {
  const all = [...usSet, ...restSet];
  const answers = [...loop.wholes, ...loop.chains.flatMap((c) => c.recordIds.map((recordId) => ({ dataset: c.dataset, recordId })))];
  const wrong: string[] = [];
  const count = new Map<string, number>();
  for (const { dataset, recordId } of answers) {
    const own = dataset === US ? usSet : restSet;
    const who = answeredBy(all, recordId) ?? '?';
    count.set(`${idOf(dataset)} on ${who}`, (count.get(`${idOf(dataset)} on ${who}`) ?? 0) + 1);
    if (!own.some((r) => r.name === who)) wrong.push(`${idOf(dataset)} ${recordId} answered by ${who}`);
  }
  const everyReplica = all.every((r) => [...count.keys()].some((k) => k.endsWith(` on ${r.name}`)));
  v.check(
    'sharded: requests land only on their group’s replica set (path routing)',
    wrong.length === 0 && everyReplica && answers.length === loop.requests,
    `${answers.length} answers: ${[...count].map(([k, c]) => `${k} ${c}`).join(', ')}${wrong.length > 0 ? '; ' + wrong.slice(0, 5).join(' | ') : ''}`,
  );
}

async function wrongSet(v: Verdicts, replica: Replica, d: ClusterDataset, selection: string): Promise<void> {
  const a = await get(replica.url, wholePath(d), KEYS.loop);
  const err = a.body?.['error'] as { status?: number; code?: string; message?: string } | undefined;
  const prefix = `${idOf(d)} is not served by this replica (--datasets ${selection}); it serves `;
  v.check(
    `sharded: ${pathOf(d)} asked of ${replica.name} directly is the contract's 404`,
    a.status === 404 && err?.status === 404 && err.code === 'not_found' && (err.message ?? '').startsWith(prefix),
    `${a.status} ${a.text.slice(0, 200)}`,
  );
}
