import { createHash } from 'node:crypto';
import { sha256Hex } from '../store/snapshot-to-table.js';
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
 * 1. the immutable objects (one, or the parts of contract 14 in series order, made again one
 *    at a time: CommitRequest.remake), each only if no object of that name exists (a retry of the very same bytes is fine). When a name
 *    holds other bytes (a publish killed before its manifest left them, or another publish
 *    is under way) the objects get names of their content's own, so a killed publish never
 *    blocks the next one and never has its objects replaced under a manifest;
 * 2. the generation's history manifest (contract 12), the manifest's bytes unchanged,
 *    before the manifest: a crash between the two leaves history/ one ahead, which no
 *    server follows (it reads manifest.json), never a manifest without its history. Once
 *    the manifest is decided, history/ is made to hold what it names (restoreHistory);
 * 3. the manifest, only if it is still the one read at the start (`ifMatch` its etag, or
 *    `ifNoneMatch: '*'` when there was none). A store that does not enforce conditions
 *    (some S3-compatible ones) gets a re-read of the manifest right before and right after
 *    the write: that narrows the race to the write itself and reports a lost one loudly.
 */
export interface CommitRequest {
  readonly productId: string;
  readonly dataset: string;
  /** the generation's objects in series order, by digest: one is written as a `/1` manifest, more as `/2` (contract 14) */
  readonly parts: readonly PartDigest[];
  /**
   * Makes the objects again, in order, handing each to `put`: a publish's output is made once
   * to name the generation (the names may depend on every object's hash) and again to write
   * it, so that it never has to be held whole in memory.
   */
  readonly remake: (put: (bytes: Uint8Array) => Promise<void>) => Promise<void>;
  readonly generation: number;
  /** RFC 3339 */
  readonly createdAt: string;
  /** etag of the manifest read at the start; null when there was none */
  readonly expectedEtag: string | null;
  /** runs right before the manifest is written (tests race a second publisher here) */
  readonly beforeManifestWrite?: () => Promise<void>;
}

/** An object of a generation as its manifest names it. */
export interface PartDigest {
  readonly sha256: string;
  readonly rows: number;
  readonly bytes: number;
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
  let manifest = manifestOf(req, false);
  if (!(await writeObjects(source, req, manifest))) {
    // A generation's usual object names are taken by other bytes: the leftover of a publish
    // killed before its manifest, or another publish under way. Names of this content's own
    // keep both intact; the manifest's condition below still lets only one of us win.
    manifest = manifestOf(req, true);
    if (!(await writeObjects(source, req, manifest))) {
      throw new PublishConflictError(
        `the objects of generation ${req.generation} already exist with other content under both their names; check the dataset and publish again`,
      );
    }
  }
  const mPath = manifestPath(req.productId, req.dataset);
  const hPath = historyPath(req.productId, req.dataset, req.generation);
  const refs = partsOf(manifest);

  await expectManifest(source, mPath, req.expectedEtag);
  const text = manifestBytes(manifest);
  await writeHistory(source, hPath, text);
  await req.beforeManifestWrite?.();
  let enforced: boolean;
  try {
    const condition = req.expectedEtag === null ? ({ ifNoneMatch: '*' } as const) : { ifMatch: req.expectedEtag };
    enforced = (await source.writeObject(mPath, text, condition)).enforced;
  } catch (e) {
    if (e instanceof PreconditionFailedError) {
      await restoreHistory(source, mPath, hPath, req.generation);
      throw changedSinceRead(mPath);
    }
    throw e;
  }
  if (!enforced) {
    const after = await source.readIfChanged(mPath, null);
    const now = after.status === 'ok' ? parseManifest(after.bytes) : null;
    if (now === null || now.generation !== manifest.generation || JSON.stringify(partsOf(now)) !== JSON.stringify(refs)) {
      await restoreHistory(source, mPath, hPath, req.generation);
      throw new PublishConflictError(
        `${mPath} was overwritten by another publisher right after ours (the store does not enforce conditional writes): it now names generation ${now?.generation ?? 'none'}; check the dataset and publish again`,
      );
    }
  }
  // A publisher that lost to us may have replaced history/ after we wrote it (see writeHistory).
  await restoreHistory(source, mPath, hPath, req.generation);
  return { manifest, enforced };
}

/** Every object of `manifest`, made again; false when one of its names holds other bytes already. */
async function writeObjects(source: SnapshotSource, req: CommitRequest, manifest: Manifest): Promise<boolean> {
  const refs = partsOf(manifest);
  let i = 0;
  try {
    await req.remake(async (bytes) => {
      const ref = refs[i++];
      if (ref === undefined || sha256Hex(bytes) !== ref.sha256) throw new Error('a part of the generation came out different when made again');
      if (!(await writeImmutable(source, objectPath(req.productId, req.dataset, ref.object), bytes, ref.sha256))) throw NAME_TAKEN;
    });
  } catch (e) {
    if (e === NAME_TAKEN) return false;
    throw e;
  }
  if (i !== refs.length) throw new Error(`the generation came out as ${i} parts when made again, not ${refs.length}`);
  return true;
}

/** Stops making objects again at the first name taken. */
const NAME_TAKEN = new Error('an object name holds other bytes');

function manifestOf(req: CommitRequest, ownNames: boolean): Manifest {
  const common = { product_id: req.productId, dataset: req.dataset, generation: req.generation, created_at: req.createdAt };
  const shas = req.parts.map((p) => p.sha256);
  const rows = req.parts.reduce((n, p) => n + p.rows, 0);
  // The content's own names: the generation number, then the first hex digits of the hash of
  // its objects' hashes (a retry of the same bytes finds its own objects again).
  const tag = ownNames ? `-${createHash('sha256').update(shas.join('')).digest('hex').slice(0, 16)}` : '';
  if (req.parts.length === 1) {
    const object = generationObjectName(req.generation).replace(/\.arrow$/, `${tag}.arrow`);
    return manifestSchema.parse({ format: MANIFEST_FORMAT, ...common, object, sha256: shas[0], rows });
  }
  const parts = req.parts.map((p, i) => ({
    object: partObjectName(req.generation, i).replace(/\/(\d+\.arrow)$/, `${tag}/$1`),
    sha256: shas[i],
    rows: p.rows,
    bytes: p.bytes,
  }));
  return partsManifestSchema.parse({ format: PARTS_MANIFEST_FORMAT, ...common, parts, rows });
}

/**
 * An object of the generation, only if no object of that name exists; true when it is there
 * with these bytes (written now, or by a retry of the very same bytes), false when that name
 * holds other bytes (or bytes being written, unreadable yet).
 */
async function writeImmutable(source: SnapshotSource, path: string, bytes: Uint8Array, sha256: string): Promise<boolean> {
  try {
    await source.writeObject(path, bytes, { ifNoneMatch: '*' });
    return true;
  } catch (e) {
    if (!(e instanceof PreconditionFailedError)) throw e;
    const existing = await source.readObject(path).catch(() => null);
    return existing !== null && createHash('sha256').update(existing).digest('hex') === sha256;
  }
}

/**
 * history/<generation>.json, created only if absent. One that is there already with other
 * bytes is the leftover of a publish that crashed before its manifest (the manifest was
 * just read and still names the previous generation, so no server ever served it): it is
 * replaced. A later publisher racing this one is still stopped by the manifest's condition,
 * and whichever of the two sees the decided manifest puts its bytes back here.
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

/**
 * history/<generation>.json must hold the manifest that is (or was) live for that
 * generation. Two publishers of one generation both write it before their manifest, the
 * later replacing the earlier's; so once the race is decided, whoever sees manifest.json
 * name this generation writes those bytes there (idempotent: winner and loser agree).
 */
async function restoreHistory(source: SnapshotSource, mPath: string, hPath: string, generation: number): Promise<void> {
  const live = await source.readIfChanged(mPath, null);
  if (live.status !== 'ok') return;
  let named: number;
  try {
    named = parseManifest(live.bytes).generation;
  } catch {
    return;
  }
  if (named !== generation) return;
  const kept = await source.readObject(hPath).catch(() => null);
  if (kept === null || !Buffer.from(kept).equals(Buffer.from(live.bytes))) await source.writeObject(hPath, live.bytes);
}

async function expectManifest(source: SnapshotSource, path: string, etag: string | null): Promise<void> {
  const r = await source.readIfChanged(path, etag);
  const same = etag === null ? r.status === 'missing' : r.status === 'unchanged';
  if (!same) throw changedSinceRead(path);
}

function changedSinceRead(path: string): PublishConflictError {
  return new PublishConflictError(`${path} changed since this publish read it (another publisher?): nothing was published; run it again`);
}
