import type { SnapshotSource } from '../source/snapshot-source.js';
import { BUILTIN_CATALOG } from '../catalog/builtin.js';
import type { Catalog } from '../catalog/catalog.js';
import { readCatalog } from '../catalog/catalog-source.js';
import type { Logger } from '../log/logger.js';
import { OpsError } from '../ops-errors.js';

/** The catalog a server starts with (contract 13). */
export interface CatalogAtStart {
  readonly catalog: Catalog;
  /** etag of the catalog.json in force; null: the built-in catalog */
  readonly etag: string | null;
  /** false: the source could not be asked, the built-in catalog stands in until it answers */
  readonly known: boolean;
}

/**
 * Reads `<source>/catalog.json` once: absent, the built-in catalog; invalid, an OpsError
 * (catalog_invalid), which `pitcache serve` turns into exit 2 (no catalog in force). A source
 * that cannot answer does not stop the start (the snapshot cache may serve meanwhile): the
 * built-in catalog stands in and the loader reads catalog.json at its first check.
 */
export async function readCatalogAtStart(source: SnapshotSource, log: Logger): Promise<CatalogAtStart> {
  let r;
  try {
    r = await readCatalog(source, null);
  } catch (e) {
    if (e instanceof OpsError && e.code !== 'source_unreachable') throw e;
    log.warn('cannot read catalog.json at start; the built-in catalog stands in until the source answers', { reason: (e as Error).message });
    return { catalog: BUILTIN_CATALOG, etag: null, known: false };
  }
  if (r.status === 'invalid') throw r.error;
  if (r.status === 'ok') return { catalog: r.catalog, etag: r.etag, known: true };
  return { catalog: BUILTIN_CATALOG, etag: null, known: true };
}
