import { createHash } from 'node:crypto';
import { PreconditionFailedError, type SnapshotSource } from '../source/snapshot-source.js';
import {
  historyPath,
  MANIFEST_FORMAT,
  manifestBytes,
  manifestPath,
  manifestSchema,
  objectPath,
  parseManifest,
  PARTS_MANIFEST_FORMAT,
  partsManifestSchema,
  partsOf,
  type Manifest,
} from '../snapshot/manifest.js';
import { generationObjectName, partObjectName } from '../snapshot/write-generation.js';

/**
 * Writes one generation so that two publishers can never silently overwrite each other:
 * 1. the immutable objects (one, or the parts of contract 14 in series order), each only if
 *    no object of that name exists (a retry of the very same bytes is fine);
 * 2. the generation's history manifest (contract 12), the manifest's bytes unchanged,
 *    before the manifest: a crash between the two leaves history/ one ahead, which no
 *    server follows (it reads manifest.json), never a manifest without its history;
 * 3. the manifest, only if it is still the one read at the start (`ifMatch` its etag, or
 *    `ifNoneMatch: '*'` when there was none). A store that does not enforce conditions
 *    (some S3-compatible ones) gets a re-read of the manifest right before and right after
 *    the write: that narrows the race to the write itself and reports a lost one loudly.
 */
export interface CommitRequest {
  readonly productId: string;
  readonly dataset: string;
  /** the generation's objects in series order, each with its rows: one is written as a `/1` manifest, more as `/2` (contract 14) */
  readonly parts: ReadonlyArray<{ readonly bytes: Uint8Array; readonly rows: number }>;
  readonly generation: number;
  /** RFC 3339 */
  readonly createdAt: string;
  /** etag of the manifest read at the start; null when there was none */
  readonly expectedEtag: string | null;
  /** runs right before the manifest is written (tests race a second publisher here) */
  readonly beforeManifestWrite?: () => Promise<void>;
}

export interface CommitResult {
  readonly manifest: Manifest;
  /** false when the store did not enforce the conditional manifest write (it was checked after) */
  readonly enforced: boolean;
}

/** Someone else published (or is publishing) this dataset: nothing of ours is served. */
export class PublishConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PublishConflictError';
  }
}

export async function commitGeneration(source: SnapshotSource, req: CommitRequest): Promise<CommitResult> {
  const manifest = manifestOf(req);
  const mPath = manifestPath(req.productId, req.dataset);
  const refs = partsOf(manifest);
  for (const [i, part] of req.parts.entries())
    await writeImmutable(source, objectPath(req.productId, req.dataset, refs[i]!.object), part.bytes, refs[i]!.sha256, req.generation);

  await expectManifest(source, mPath, req.expectedEtag);
  const text = manifestBytes(manifest);
  await writeHistory(source, historyPath(req.productId, req.dataset, req.generation), text);
  await req.beforeManifestWrite?.();
  let enforced: boolean;
  try {
    const condition = req.expectedEtag === null ? ({ ifNoneMatch: '*' } as const) : { ifMatch: req.expectedEtag };
    enforced = (await source.writeObject(mPath, text, condition)).enforced;
  } catch (e) {
    if (e instanceof PreconditionFailedError) throw changedSinceRead(mPath);
    throw e;
  }
  if (!enforced) {
    const after = await source.readIfChanged(mPath, null);
    const now = after.status === 'ok' ? parseManifest(after.bytes) : null;
    if (now === null || now.generation !== manifest.generation || JSON.stringify(partsOf(now)) !== JSON.stringify(refs)) {
      throw new PublishConflictError(
        `${mPath} was overwritten by another publisher right after ours (the store does not enforce conditional writes): it now names generation ${now?.generation ?? 'none'}; check the dataset and publish again`,
      );
    }
  }
  return { manifest, enforced };
}

function manifestOf(req: CommitRequest): Manifest {
  const common = { product_id: req.productId, dataset: req.dataset, generation: req.generation, created_at: req.createdAt };
  const sha = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
  const rows = req.parts.reduce((n, p) => n + p.rows, 0);
  if (req.parts.length === 1) {
    const only = req.parts[0]!;
    return manifestSchema.parse({ format: MANIFEST_FORMAT, ...common, object: generationObjectName(req.generation), sha256: sha(only.bytes), rows });
  }
  const parts = req.parts.map((p, i) => ({ object: partObjectName(req.generation, i), sha256: sha(p.bytes), rows: p.rows, bytes: p.bytes.byteLength }));
  return partsManifestSchema.parse({ format: PARTS_MANIFEST_FORMAT, ...common, parts, rows });
}

/**
 * An object of the generation, only if no object of that name exists (a retry of the very
 * same bytes is fine).
 */
async function writeImmutable(source: SnapshotSource, path: string, bytes: Uint8Array, sha256: string, generation: number): Promise<void> {
  try {
    await source.writeObject(path, bytes, { ifNoneMatch: '*' });
  } catch (e) {
    if (!(e instanceof PreconditionFailedError)) throw e;
    // Another writer may hold the object mid-write: unreadable counts as "other content".
    const existing = await source.readObject(path).catch(() => null);
    if (existing === null || createHash('sha256').update(existing).digest('hex') !== sha256) {
      throw new PublishConflictError(
        `${path} already exists with other content: another publish of generation ${generation} is under way, or one failed before writing its manifest (remove that object if no publish is running)`,
      );
    }
  }
}

/**
 * history/<generation>.json, created only if absent. One that is there already with other
 * bytes is the leftover of a publish that crashed before its manifest (the manifest was
 * just read and still names the previous generation, so no server ever served it): it is
 * replaced. A later publisher racing this one is still stopped by the manifest's condition.
 */
async function writeHistory(source: SnapshotSource, path: string, text: Uint8Array): Promise<void> {
  try {
    await source.writeObject(path, text, { ifNoneMatch: '*' });
  } catch (e) {
    if (!(e instanceof PreconditionFailedError)) throw e;
    const existing = await source.readObject(path).catch(() => null);
    if (existing !== null && Buffer.from(existing).equals(text)) return;
    await source.writeObject(path, text);
  }
}

async function expectManifest(source: SnapshotSource, path: string, etag: string | null): Promise<void> {
  const r = await source.readIfChanged(path, etag);
  const same = etag === null ? r.status === 'missing' : r.status === 'unchanged';
  if (!same) throw changedSinceRead(path);
}

function changedSinceRead(path: string): PublishConflictError {
  return new PublishConflictError(`${path} changed since this publish read it (another publisher?): nothing was published; run it again`);
}
