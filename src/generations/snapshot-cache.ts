import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { MANIFEST_FORMAT, parseManifest, partsOf, type Manifest } from '../snapshot/manifest.js';

/**
 * `--cache-dir`: verified copies of the last good generation of each dataset on local disk,
 * so a restart serves while the source is down. Written only after a generation passed
 * every check; read only when the source cannot be reached at start. Holds one generation
 * per dataset (older ones are removed): its object `snapshots/<generation>.arrow`, or its
 * parts under `snapshots/<generation>/`, and its manifest, naming them there.
 */
export class SnapshotCache {
  constructor(private readonly dir: string) {}

  async save(productId: string, dataset: string, manifest: Manifest, parts: readonly Uint8Array[]): Promise<void> {
    const folder = join(this.dir, productId, dataset);
    const objects = join(folder, 'snapshots');
    const generation = String(manifest.generation).padStart(8, '0');
    const single = manifest.format === MANIFEST_FORMAT;
    await mkdir(single ? objects : join(objects, generation), { recursive: true });
    const names = single ? [`snapshots/${generation}.arrow`] : parts.map((_, i) => `snapshots/${generation}/${String(i).padStart(5, '0')}.arrow`);
    for (const [i, bytes] of parts.entries()) await atomicWrite(join(folder, names[i]!), bytes);
    const local = single ? { ...manifest, object: names[0]! } : { ...manifest, parts: manifest.parts.map((p, i) => ({ ...p, object: names[i]! })) };
    await atomicWrite(join(folder, 'manifest.json'), Buffer.from(JSON.stringify(local, null, 2)));
    const keep = single ? `${generation}.arrow` : generation;
    for (const f of await readdir(objects)) if (f !== keep) await rm(join(objects, f), { recursive: true, force: true });
  }

  /** The cached manifest and parts, or null when there is none (or it is unreadable). */
  async load(productId: string, dataset: string): Promise<{ manifest: Manifest; parts: Uint8Array[] } | null> {
    const folder = join(this.dir, productId, dataset);
    try {
      const manifest = parseManifest(await readFile(join(folder, 'manifest.json')));
      const parts: Uint8Array[] = [];
      for (const p of partsOf(manifest)) parts.push(await readFile(join(folder, p.object)));
      return { manifest, parts };
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
