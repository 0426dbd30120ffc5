/**
 * Where snapshots come from. A local folder and S3 are two implementations of this one
 * interface; everything above it (manifest parsing, sha256, Arrow decoding, swapping
 * generations) is shared and never knows which one it talks to.
 *
 * Paths are relative to the source root and use `/`, e.g. `pemi/grid_stress/manifest.json`.
 */

import { OpsError } from '../ops-errors.js';

export interface DatasetRef {
  readonly productId: string;
  readonly dataset: string;
}

export type ConditionalRead =
  { readonly status: 'unchanged' } | { readonly status: 'ok'; readonly bytes: Uint8Array; readonly etag: string } | { readonly status: 'missing' };

export interface SnapshotSource {
  /** For logs: the source as the operator wrote it. */
  readonly description: string;

  /** Every `<product>/<dataset>` folder that holds a manifest.json. */
  listDatasets(): Promise<DatasetRef[]>;

  /**
   * Reads a small object (a manifest) unless its etag still equals `etag` ('unchanged',
   * which must cost no transfer). 'missing' when there is no such object.
   */
  readIfChanged(path: string, etag: string | null): Promise<ConditionalRead>;

  /**
   * Reads an immutable object whole. `sizeHint` lets an implementation preallocate.
   * Throws ObjectMissingError when there is no such object, another Error when the source
   * cannot answer.
   */
  readObject(path: string, sizeHint?: number): Promise<Uint8Array>;

  /**
   * Reads an immutable object as readObject does, handing each stretch of its bytes to
   * `onBytes` as it arrives, in order and each byte once (so a hash runs while the object
   * streams in, not over the whole buffer afterwards). Optional: streamObject() falls back
   * to readObject for a source without it.
   */
  readObjectStreaming?(path: string, sizeHint: number | undefined, onBytes: (bytes: Uint8Array) => void): Promise<Uint8Array>;

  /**
   * Writes an object (publishing). Immutable objects are written before the manifest.
   * With a condition, the write happens only if the object's current etag matches
   * (`ifMatch`) or the object does not exist (`ifNoneMatch: '*'`); otherwise it throws
   * PreconditionFailedError. `enforced` says whether the store honoured the condition
   * atomically (some S3-compatible stores ignore conditional headers).
   */
  writeObject(path: string, bytes: Uint8Array, condition?: WriteCondition): Promise<WriteResult>;
}

/** An object's bytes, each stretch handed to `onBytes` as it arrives (see SnapshotSource.readObjectStreaming). */
export async function streamObject(
  source: SnapshotSource,
  path: string,
  sizeHint: number | undefined,
  onBytes: (bytes: Uint8Array) => void,
): Promise<Uint8Array> {
  if (source.readObjectStreaming !== undefined) return source.readObjectStreaming(path, sizeHint, onBytes);
  const bytes = await source.readObject(path, sizeHint);
  onBytes(bytes);
  return bytes;
}

/** An object found by listing: its path (relative to the source root) and size in bytes. */
export interface ListedObject {
  readonly path: string;
  readonly bytes: number;
}

/**
 * A source that ops may also clean up (`pitcache prune`): list what is under a folder and
 * delete objects. Kept apart from SnapshotSource: a server never lists or deletes.
 */
export interface PrunableSource extends SnapshotSource {
  /** Every object whose path starts with `prefix` (a folder path ending in `/`), sorted by path. */
  listObjects(prefix: string): Promise<ListedObject[]>;
  /** Deletes one object; deleting an absent one is not an error. */
  deleteObject(path: string): Promise<void>;
}

export type WriteCondition = { readonly ifMatch: string } | { readonly ifNoneMatch: '*' };

export interface WriteResult {
  readonly etag: string | null;
  readonly enforced: boolean;
}

/** A conditional write lost a race: someone else changed the object first. */
export class PreconditionFailedError extends OpsError {
  declare readonly code: 'precondition_failed';
  constructor(readonly path: string) {
    super('precondition_failed', `${path} was changed by someone else (conditional write refused)`);
    this.name = 'PreconditionFailedError';
  }
}

/** The object a manifest names is not there (a broken publication, not an outage). */
export class ObjectMissingError extends OpsError {
  declare readonly code: 'object_missing';
  constructor(readonly path: string) {
    super('object_missing', `object ${path} is missing`);
    this.name = 'ObjectMissingError';
  }
}
