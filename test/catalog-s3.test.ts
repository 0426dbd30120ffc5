/**
 * Contract 13 on S3 (s3rver): catalog.json is read with a conditional read (unchanged costs
 * no transfer), `pitcache catalog --set` writes it conditionally, a server on S3 applies a
 * new catalog at its next check, and an invalid one at start makes no catalog in force.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogCommand } from '../src/cli/catalog-command.js';
import { Catalog } from '../src/catalog/catalog.js';
import { CatalogConflictError, readCatalog, writeCatalog } from '../src/catalog/catalog-source.js';
import { MemoryOutput } from '../src/publish/output.js';
import { OpsError } from '../src/ops-errors.js';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gridSpec, publish, serve, startS3World, type S3World } from './support/s3-harness.js';

const grid = (datasets: string[]) =>
  new Catalog([
    {
      id: 'pemi',
      name: 'Power',
      floor: '2026-03-02',
      filters: [{ param: 'bidding_zone', allowed: null }],
      datasets: datasets.map((name) => ({ name, description: '' })),
    },
  ]);

let world: S3World;
let dir: string;
beforeAll(async () => {
  world = await startS3World('cat');
  dir = await mkdtemp(join(tmpdir(), 'pitcache-catalog-s3-'));
  await publish(world.publisher, 1, gridSpec(1));
});
afterAll(async () => {
  await world?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('contract 13 on S3', () => {
  it('reads catalog.json conditionally: absent, ok with an etag, unchanged for it; writes refuse a stale etag', async () => {
    const source = world.openSource();
    expect((await readCatalog(source, null)).status).toBe('absent');
    await writeCatalog(world.publisher, grid(['grid_stress']), null);
    const first = await readCatalog(source, null);
    expect(first.status).toBe('ok');
    const etag = (first as { etag: string }).etag;
    expect((await readCatalog(source, etag)).status).toBe('unchanged');
    await writeCatalog(world.publisher, grid(['grid_stress', 'more']), etag);
    await expect(writeCatalog(world.publisher, grid(['other']), etag)).rejects.toBeInstanceOf(CatalogConflictError);
    const now = await readCatalog(source, etag);
    expect(now.status === 'ok' && now.catalog.ids()).toEqual(['pemi/grid_stress', 'pemi/more']);
  });

  it('pitcache catalog --source s3://... --set FILE writes it; --source prints it', async () => {
    const file = join(dir, 'c.json');
    await writeFile(
      file,
      JSON.stringify({
        format: 'pitcache-catalog/1',
        products: [
          {
            id: 'pemi',
            name: 'Power',
            floor: null,
            filters: [{ param: 'bidding_zone', allowed: null }],
            datasets: [{ name: 'grid_stress', description: 'grid' }],
          },
        ],
      }),
    );
    const env = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };
    const run = async (argv: string[]) => {
      const io = { stdout: new MemoryOutput(), stderr: new MemoryOutput() };
      Object.assign(process.env, env);
      const code = await catalogCommand([...argv, '--s3-endpoint', world.s3.endpoint, '--s3-force-path-style'], process.env, io);
      return { code, out: io.stdout.text(), err: io.stderr.text() };
    };
    const set = await run(['--source', world.location, '--set', file]);
    expect(set.err).toBe('');
    expect(set.code).toBe(0);
    const printed = await run(['--source', world.location]);
    expect(JSON.parse(printed.out).products[0]).toMatchObject({ id: 'pemi', floor: null, datasets: [{ name: 'grid_stress', description: 'grid' }] });
  });

  it('a server on S3 applies a new catalog at its next check; an invalid one at start is no catalog in force', async () => {
    await writeCatalog(world.publisher, grid(['grid_stress']), ((await readCatalog(world.publisher, null)) as { etag: string }).etag);
    const s = await serve(world.openSource());
    try {
      expect((await s.get('/pemi/grid_stress')).status).toBe(200);
      expect((await s.get('/gbsi_eu/system_stress')).status).toBe(404);
      await writeCatalog(world.publisher, grid(['grid_stress', 'later']), ((await readCatalog(world.publisher, null)) as { etag: string }).etag);
      await s.refresh();
      expect((await s.get('/pemi/later')).status).toBe(503);
      await world.put('catalog.json', '{"format": "pitcache-catalog/1", "products": [{"id": "admin", "name": "x", "floor": null, "datasets": []}]}');
      await s.refresh();
      expect((await s.get('/pemi/later')).status).toBe(503);
      const status = await s.get('/admin/status', 'test-key-admin');
      expect(status.body.catalog.last_error).toMatch(/product "admin" \(products\[0\]\): id "admin" is a route word/);
    } finally {
      await s.close();
    }
    await expect(serve(world.openSource())).rejects.toSatisfy((e: unknown) => e instanceof OpsError && e.code === 'catalog_invalid');
  });
});
