import type { DatasetRef, SnapshotSource } from '../source/snapshot-source.js';
import { fromSource, OpsError } from '../ops-errors.js';
import { manifestPath, parseManifest, type Manifest } from './manifest.js';

export type ManifestCheck =
  { readonly status: 'unchanged' } | { readonly status: 'missing' } | { readonly status: 'ok'; readonly manifest: Manifest; readonly etag: string };

/**
 * Reads and validates a dataset's manifest, conditionally on the etag last seen (the
 * server's poll, the publisher's and `asof`'s read alike). Throws an OpsError with a
 * one-line reason when it is unreachable or malformed.
 */
export async function readManifest(source: SnapshotSource, ref: DatasetRef, etag: string | null): Promise<ManifestCheck> {
  const path = manifestPath(ref.productId, ref.dataset);
  const r = await fromSource(`reading ${path}`, () => source.readIfChanged(path, etag));
  if (r.status !== 'ok') return r;
  const manifest = parseManifest(r.bytes);
  if (manifest.product_id !== ref.productId || manifest.dataset !== ref.dataset) {
    throw new OpsError('manifest_invalid', `manifest names ${manifest.product_id}/${manifest.dataset}, not ${ref.productId}/${ref.dataset}`);
  }
  return { status: 'ok', manifest, etag: r.etag };
}
