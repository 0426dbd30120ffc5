/**
 * What both topologies share: s3rver holding the snapshots and the keys file, the
 * publisher, the expected answers, and how a replica and a balancer are started on ports
 * chosen free.
 */
import { freePort } from '../../bench/lib/proc.js';
import { Expectations } from './api-client.js';
import type { Children } from './children.js';
import { idOf, type ClusterDataset } from './generations.js';
import { Haproxy } from './haproxy.js';
import { haproxyConfig, type Backend } from './haproxy-config.js';
import { Publisher } from './publisher.js';
import { Replica } from './replica.js';
import { S3_ENV, S3Store } from './s3-store.js';

export const REFRESH_SECONDS = 2;
export const DRAIN_SECONDS = 2;

/** pemi/grid_stress: 8 zones x 15 days = 120 rows. */
export const GRID: ClusterDataset = {
  productId: 'pemi',
  dataset: 'grid_stress',
  keyColumn: 'bidding_zone',
  series: ['AT', 'BE', 'CH', 'DE-LU', 'DK1', 'FR', 'NL', 'PL'],
  dates: 15,
};
/** gbsi_us/system_stress: no series key, 40 days = 40 rows. */
export const US: ClusterDataset = { productId: 'gbsi_us', dataset: 'system_stress', keyColumn: null, series: [], dates: 40 };

/** The keys file's keys (plaintext: local use); `ops` may read /admin/status. */
export const KEYS = { loop: 'cluster-loop-key', revoked: 'cluster-revoked-key', ops: 'cluster-ops-key' } as const;
const KEYS_OBJECT = 'conf/keys.json';

export class World {
  readonly expect = new Expectations();
  readonly publisher: Publisher;

  private constructor(
    readonly children: Children,
    readonly s3: S3Store,
  ) {
    this.publisher = new Publisher(children, s3, s3.url('pit'), children.tempDir('inputs'));
  }

  static async start(children: Children): Promise<World> {
    return new World(children, await S3Store.start(children, 'pitcache'));
  }

  /**
   * Publishes generation g of every dataset given, side by side; the expectations know g
   * before any replica can serve it. Resolves with when each publish ended (its manifest
   * was in place), by dataset id.
   */
  async publish(datasets: readonly ClusterDataset[], g: number): Promise<Map<string, number>> {
    for (const d of datasets) this.expect.add(d, g);
    const ends = await Promise.all(datasets.map(async (d) => [idOf(d), await this.publisher.publish(d, g).then(() => Date.now())] as const));
    return new Map(ends);
  }

  /** Writes the keys file with the named keys of KEYS. */
  async writeKeys(ids: ReadonlyArray<keyof typeof KEYS>): Promise<void> {
    const keys = ids.map((id) => ({ id, key: KEYS[id], products: ['*'], ...(id === 'ops' ? { admin: true } : {}) }));
    await this.s3.put(KEYS_OBJECT, JSON.stringify({ keys }));
  }

  /** A replica (not started) on fresh ports; `datasets` is its --datasets selection, if any. */
  async replica(name: string, datasets: string | null = null): Promise<Replica> {
    const args = [
      '--source',
      this.publisher.source,
      '--keys',
      this.s3.url(KEYS_OBJECT),
      ...this.s3.cliFlags(),
      '--refresh-interval',
      String(REFRESH_SECONDS),
      '--drain-seconds',
      String(DRAIN_SECONDS),
      '--workers',
      '1',
      ...(datasets === null ? [] : ['--datasets', datasets]),
    ];
    return new Replica(this.children, name, await freePort(), await freePort(), args, S3_ENV);
  }

  /** HAProxy in front of the backends, once every server is UP. */
  async balancer(backends: readonly Backend[]): Promise<Haproxy> {
    const dir = this.children.tempDir('haproxy');
    const port = await freePort();
    const h = await Haproxy.start(this.children, dir, haproxyConfig(port, `${dir}/admin.sock`, backends), port, `${dir}/admin.sock`);
    for (const b of backends) for (const s of b.servers) await h.waitStatus(s.name, 'UP');
    return h;
  }
}
