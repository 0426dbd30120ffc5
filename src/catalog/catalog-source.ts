import { PreconditionFailedError, type SnapshotSource } from '../source/snapshot-source.js';
import { fromSource, OpsError } from '../ops-errors.js';
import { BUILTIN_CATALOG } from './builtin.js';
import type { Catalog } from './catalog.js';
import { CATALOG_PATH, catalogBytes, parseCatalogDocument } from './catalog-document.js';

/**
 * What a read of `<source>/catalog.json` found (contract 13): no change since `etag`; no
 * catalog.json (the built-in catalog applies); a valid one; or an invalid one, with its etag
 * so that it is not read again until it changes, and the reason.
 */
export type CatalogCheck =
  | { readonly status: 'unchanged' }
  | { readonly status: 'absent'; readonly catalog: Catalog }
  | { readonly status: 'ok'; readonly catalog: Catalog; readonly etag: string }
  | { readonly status: 'invalid'; readonly error: OpsError; readonly etag: string };

/** The conditional read of catalog.json, like a manifest's. Throws an OpsError (source_unreachable) when the source cannot answer. */
export async function readCatalog(source: SnapshotSource, etag: string | null): Promise<CatalogCheck> {
  const r = await fromSource(`reading ${CATALOG_PATH}`, () => source.readIfChanged(CATALOG_PATH, etag));
  if (r.status === 'unchanged') return r;
  if (r.status === 'missing') return { status: 'absent', catalog: BUILTIN_CATALOG };
  try {
    return { status: 'ok', catalog: parseCatalogDocument(r.bytes), etag: r.etag };
  } catch (e) {
    if (e instanceof OpsError) return { status: 'invalid', error: e, etag: r.etag };
    throw e;
  }
}

/** The catalog in force at a source: its catalog.json, or the built-in one without; throws when it is invalid or unreachable. */
export async function catalogInForce(source: SnapshotSource): Promise<{ readonly catalog: Catalog; readonly etag: string | null }> {
  const r = await readCatalog(source, null);
  if (r.status === 'invalid') throw r.error;
  if (r.status === 'unchanged') throw new Error('unreachable: an unconditional read answered unchanged');
  return { catalog: r.catalog, etag: r.status === 'ok' ? r.etag : null };
}

/** Someone changed catalog.json between our read and our write: nothing was written. */
export class CatalogConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CatalogConflictError';
  }
}

/**
 * Writes catalog.json only if it is still what was read (`expectedEtag`; null: there was
 * none), as a manifest is published (commit-generation.ts): two writers cannot overwrite each
 * other. A store that does not enforce conditions gets a re-read before and after the write.
 */
export async function writeCatalog(source: SnapshotSource, catalog: Catalog, expectedEtag: string | null): Promise<{ readonly enforced: boolean }> {
  const before = await source.readIfChanged(CATALOG_PATH, expectedEtag);
  const same = expectedEtag === null ? before.status === 'missing' : before.status === 'unchanged';
  if (!same) throw changed();
  const bytes = catalogBytes(catalog);
  let enforced: boolean;
  try {
    enforced = (await source.writeObject(CATALOG_PATH, bytes, expectedEtag === null ? { ifNoneMatch: '*' } : { ifMatch: expectedEtag })).enforced;
  } catch (e) {
    if (e instanceof PreconditionFailedError) throw changed();
    throw e;
  }
  if (!enforced) {
    const after = await source.readIfChanged(CATALOG_PATH, null);
    if (after.status !== 'ok' || !Buffer.from(after.bytes).equals(Buffer.from(bytes))) {
      throw new CatalogConflictError(
        `${CATALOG_PATH} was overwritten by another writer right after ours (the store does not enforce conditional writes); check it and set it again`,
      );
    }
  }
  return { enforced };
}

function changed(): CatalogConflictError {
  return new CatalogConflictError(`${CATALOG_PATH} changed since it was read (another writer?): nothing was written; run it again`);
}
