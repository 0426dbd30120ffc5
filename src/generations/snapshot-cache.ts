import { mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalSource } from '../source/local-source.js';
import type { SnapshotSource } from '../source/snapshot-source.js';
import { MANIFEST_FORMAT, parseManifest, type Manifest } from '../snapshot/manifest.js';
import type { PartKeeper } from './load-generation.js';

/** A generation's parts being written to the cache as they are verified; committed once the generation is built. */
export interface CacheStage extends PartKeeper {
  /** the manifest, naming the parts here: the cache now holds this generation (older ones are removed) */
  commit(): Promise<void>;
  /** the generation was refused: its parts written so far go */
  discard(): Promise<void>;
}

/**
 * `--cache-dir`: verified copies of the last good generation of each dataset on local disk,
 * so a restart serves while the source is down. Each part is written once its bytes matched
 * the manifest's sha256, as the load goes; the manifest only after the generation passed
 * every check. Read only when the source cannot be reached at start, through the same
 * streamed, verified load as the source (`source()`). Holds one generation per dataset: its
 * object `snapshots/<generation>.arrow`, or its parts under `snapshots/<generation>/`, and
 * its manifest, naming them there.
 */
export class SnapshotCache {
  constructor(private readonly dir: string) {}

  /** The cache as a snapshot source: `<product>/<dataset>/manifest.json` and the objects it names. */
  source(): SnapshotSource {
    return new LocalSource(this.dir);
  }

  stage(productId: string, dataset: string, manifest: Manifest): CacheStage {
    const folder = join(this.dir, productId, dataset);
    const objects = join(folder, 'snapshots');
    const generation = String(manifest.generation).padStart(8, '0');
    const single = manifest.format === MANIFEST_FORMAT;
    const nameOf = (i: number): string => (single ? `snapshots/${generation}.arrow` : `snapshots/${generation}/${String(i).padStart(5, '0')}.arrow`);
    const keep = single ? `${generation}.arrow` : generation;
    return {
      keep: async (index, bytes) => {
        await mkdir(single ? objects : join(objects, generation), { recursive: true });
        await atomicWrite(join(folder, nameOf(index)), bytes);
      },
      commit: async () => {
        const local = single ? { ...manifest, object: nameOf(0) } : { ...manifest, parts: manifest.parts.map((p, i) => ({ ...p, object: nameOf(i) })) };
        await mkdir(objects, { recursive: true });
        await atomicWrite(join(folder, 'manifest.json'), Buffer.from(JSON.stringify(local, null, 2)));
        for (const f of await readdir(objects)) if (f !== keep) await rm(join(objects, f), { recursive: true, force: true });
      },
      discard: async () => {
        // The generation the cache holds stays (a refused load of that same generation rewrote identical, verified bytes).
        if ((await this.manifest(productId, dataset))?.generation === manifest.generation) return;
        await rm(join(objects, keep), { recursive: true, force: true });
      },
    };
  }

  /** The cached manifest, or null when there is none (or it is unreadable). */
  async manifest(productId: string, dataset: string): Promise<Manifest | null> {
    try {
      return parseManifest(await readFile(join(this.dir, productId, dataset, 'manifest.json')));
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
