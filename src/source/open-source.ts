import { parseStoreLocation } from './location.js';
import { LocalSource } from './local-source.js';
import { S3Source } from './s3-source.js';
import type { ConditionalWrites } from './s3-source.js';
import type { PrunableSource, SnapshotSource } from './snapshot-source.js';

/** How to reach an S3-compatible store; ignored for a local source. */
export interface S3Access {
  readonly endpoint?: string;
  readonly forcePathStyle?: boolean;
  readonly conditionalWrites?: ConditionalWrites;
}

/** The source behind `s3://bucket/prefix`, `file:///abs/dir` or a path (contract 6). */
export function openSource(location: string, s3: S3Access = {}): PrunableSource {
  const parsed = parseStoreLocation(location);
  if (typeof parsed === 'string') throw new Error(`source ${JSON.stringify(location)}: ${parsed}`);
  if (parsed.kind === 'local') return new LocalSource(location);
  return new S3Source(location, { endpoint: s3.endpoint, forcePathStyle: s3.forcePathStyle, conditionalWrites: s3.conditionalWrites });
}

/** One object named by a whole location (a keys file on S3 or on disk): the source of its folder and its name there. */
export function openLocation(location: string, s3: S3Access = {}): { source: SnapshotSource; name: string } {
  const parsed = parseStoreLocation(location);
  if (typeof parsed === 'string') throw new Error(`${JSON.stringify(location)}: ${parsed}`);
  const cut = location.lastIndexOf('/');
  // A bare file name (`keys.json`) lives in the working directory.
  const folder = cut < 0 ? '.' : location.slice(0, cut) || '/';
  return { source: openSource(folder, s3), name: location.slice(cut + 1) };
}

/** Reads one whole object named by a location (a keys file on S3 or on disk). */
export async function readLocation(location: string, s3: S3Access = {}): Promise<Uint8Array> {
  const { source, name } = openLocation(location, s3);
  return source.readObject(name);
}
