import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseManifest, type Manifest } from '../snapshot/manifest.js';

/**
 * `--cache-dir`: verified copies of the last good snapshot of each dataset on local disk, so
 * a restart serves while the source is down. Written only after a generation passed every
 * check; read only when the source cannot be reached at start. Holds one generation per
 * dataset (older objects are removed).
 */
export class SnapshotCache {
  constructor(private readonly dir: string) {}

  async save(productId: string, dataset: string, manifest: Manifest, bytes: Uint8Array): Promise<void> {
    const folder = join(this.dir, productId, dataset);
    const objects = join(folder, 'snapshots');
    await mkdir(objects, { recursive: true });
    const name = `${String(manifest.generation).padStart(8, '0')}.arrow`;
    await atomicWrite(join(objects, name), bytes);
    await atomicWrite(join(folder, 'manifest.json'), Buffer.from(JSON.stringify({ ...manifest, object: `snapshots/${name}` }, null, 2)));
    for (const f of await readdir(objects)) if (f !== name) await rm(join(objects, f), { force: true });
  }

  /** The cached manifest and object, or null when there is none (or it is unreadable). */
  async load(productId: string, dataset: string): Promise<{ manifest: Manifest; bytes: Uint8Array } | null> {
    const folder = join(this.dir, productId, dataset);
    try {
      const manifest = parseManifest(await readFile(join(folder, 'manifest.json')));
      return { manifest, bytes: await readFile(join(folder, manifest.object)) };
    } catch {
      return null;
    }
  }
}

async function atomicWrite(path: string, bytes: Uint8Array): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, bytes);
  await rename(tmp, path);
}
