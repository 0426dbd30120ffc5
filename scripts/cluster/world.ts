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
import { filledConfig, shippedConfig, type Backend } from './haproxy-config.js';
import { Publisher } from './publisher.js';
import { Replica } from './replica.js';
import { S3_ENV, S3Store } from './s3-store.js';

export const REFRESH_SECONDS = 2;
/**
 * Above the time the shipped HAProxy config takes to see a draining replica (two failed
 * checks 2 s apart, README "Behind a proxy"), so that it leaves the rotation before it stops.
 */
export const DRAIN_SECONDS = 6;

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
/** Where the snapshots live in the bucket. */
const PREFIX = 'pit';

export class World {
  readonly expect = new Expectations();
  readonly publisher: Publisher;

  private constructor(
    readonly children: Children,
    readonly s3: S3Store,
  ) {
    this.publisher = new Publisher(children, s3, s3.url(PREFIX), children.tempDir('inputs'));
  }

  static async start(children: Children): Promise<World> {
    return new World(children, await S3Store.start(children, 'pitcache'));
  }

  /**
   * Publishes generation g of every dataset given, side by side; the expectations know g
   * before any replica can serve it. Resolves with when each dataset's manifest.json first
   * changed at the source (watched while the publish ran, by its ETag), by dataset id: the
   * instant a replica's next check could see the new generation.
   */
  async publish(datasets: readonly ClusterDataset[], g: number): Promise<Map<string, number>> {
    for (const d of datasets) this.expect.add(d, g);
    const seen = await Promise.all(
      datasets.map(async (d) => {
        const key = `${PREFIX}/${idOf(d)}/manifest.json`;
        const before = await this.s3.etag(key);
        let finished = false;
        const done = this.publisher.publish(d, g).finally(() => (finished = true));
        // Awaited below; handled now so a failure meanwhile is not an unhandled rejection.
        done.catch(() => undefined);
        let at: number | null = null;
        while (at === null && !finished) {
          // A HEAD that fails while the object is being replaced saw no change yet.
          const now = await this.s3.etag(key).catch(() => before);
          if (now !== before) at = Date.now();
          else await new Promise((r) => setTimeout(r, 50));
        }
        await done;
        return [idOf(d), at ?? Date.now()] as const;
      }),
    );
    return new Map(seen);
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
    const h = await Haproxy.start(this.children, dir, filledConfig(shippedConfig(), port, backends), port);
    for (const b of backends) for (const s of b.servers) await h.waitStatus(s.name, 'UP');
    return h;
  }
}
