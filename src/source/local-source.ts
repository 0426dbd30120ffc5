import { constants } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { link, mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ObjectMissingError,
  PreconditionFailedError,
  type ConditionalRead,
  type DatasetRef,
  type ListedObject,
  type PrunableSource,
  type WriteCondition,
  type WriteResult,
} from './snapshot-source.js';

const READ_CHUNK = 64 * 1024 * 1024;
/** A streamed read's stretch: small enough that whoever hears of it (a hash) never holds the event loop long. */
const STREAM_CHUNK = 1024 * 1024;
const MAX_LENGTH = constants.MAX_LENGTH;

/** A snapshot source in a local folder (`file:///abs/dir` or a path). */
export class LocalSource implements PrunableSource {
  readonly description: string;
  private readonly root: string;

  constructor(location: string) {
    this.root = location.startsWith('file://') ? fileURLToPath(location) : resolve(location);
    this.description = this.root;
  }

  async listDatasets(): Promise<DatasetRef[]> {
    const out: DatasetRef[] = [];
    for (const product of await listDirs(this.root)) {
      for (const dataset of await listDirs(join(this.root, product))) {
        if (await exists(join(this.root, product, dataset, 'manifest.json'))) out.push({ productId: product, dataset });
      }
    }
    return out.sort((a, b) => (a.productId + '/' + a.dataset < b.productId + '/' + b.dataset ? -1 : 1));
  }

  async readIfChanged(path: string, etag: string | null): Promise<ConditionalRead> {
    let bytes: Buffer;
    try {
      bytes = await readFile(this.resolvePath(path));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'missing' };
      throw e;
    }
    // Small objects only: hashing the content is the honest etag for a file.
    const tag = createHash('sha256').update(bytes).digest('hex');
    if (tag === etag) return { status: 'unchanged' };
    return { status: 'ok', bytes, etag: tag };
  }

  /**
   * Reads into one buffer sized from the file, in chunks: readFile stops at 2 GiB, while a
   * snapshot of tens of millions of rows can be larger (one buffer holds up to 4 GiB).
   */
  readObject(path: string): Promise<Uint8Array> {
    return this.readChunked(path, READ_CHUNK, null);
  }

  readObjectStreaming(path: string, _sizeHint: number | undefined, onBytes: (bytes: Uint8Array) => void): Promise<Uint8Array> {
    return this.readChunked(path, STREAM_CHUNK, onBytes);
  }

  private async readChunked(path: string, chunk: number, onBytes: ((bytes: Uint8Array) => void) | null): Promise<Uint8Array> {
    let handle;
    try {
      handle = await open(this.resolvePath(path), 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectMissingError(path);
      throw e;
    }
    try {
      const { size } = await handle.stat();
      if (size > MAX_LENGTH) throw new Error(`${path} is ${size} bytes; a snapshot object can be at most ${MAX_LENGTH} bytes`);
      const out = Buffer.allocUnsafe(size);
      let at = 0;
      while (at < size) {
        const { bytesRead } = await handle.read(out, at, Math.min(chunk, size - at), at);
        if (bytesRead === 0) throw new Error(`${path} shrank while being read`);
        onBytes?.(out.subarray(at, at + bytesRead));
        at += bytesRead;
      }
      return out;
    } finally {
      await handle.close();
    }
  }

  async writeObject(path: string, bytes: Uint8Array, condition?: WriteCondition): Promise<WriteResult> {
    const target = this.resolvePath(path);
    await mkdir(dirname(target), { recursive: true });
    const etag = createHash('sha256').update(bytes).digest('hex');
    // The bytes go to a temporary file first, outside any lock: a writer killed while
    // writing leaves only that file (never an object, never a lock held for long).
    const tmp = await writeTemp(target, bytes);
    try {
      if (condition === undefined) {
        await rename(tmp, target);
        return { etag, enforced: false };
      }
      // Compare-and-swap under an exclusive lock file: two publishers on one machine (or one
      // shared file system with atomic link) cannot both win.
      const release = await takeLock(`${target}.lock`, path);
      try {
        const current = await this.readIfChanged(path, null);
        const ok = 'ifMatch' in condition ? current.status === 'ok' && current.etag === condition.ifMatch : current.status === 'missing';
        if (!ok) throw new PreconditionFailedError(path);
        await rename(tmp, target);
        return { etag, enforced: true };
      } finally {
        await release();
      }
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async listObjects(prefix: string): Promise<ListedObject[]> {
    const out: ListedObject[] = [];
    const walk = async (rel: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(this.resolvePath(rel), { withFileTypes: true });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw e;
      }
      for (const e of entries) {
        const path = `${rel}/${e.name}`;
        if (e.isDirectory()) await walk(path);
        // Temp and lock files of a write under way are not objects yet.
        else if (e.isFile() && !/\.(tmp-[^/]*|lock)$/.test(e.name)) out.push({ path, bytes: (await stat(this.resolvePath(path))).size });
      }
    };
    await walk(prefix.replace(/\/+$/, ''));
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async deleteObject(path: string): Promise<void> {
    await rm(this.resolvePath(path), { force: true });
  }

  private resolvePath(path: string): string {
    const full = resolve(this.root, path);
    if (!full.startsWith(this.root + '/') && full !== this.root) throw new Error(`path escapes the source: ${path}`);
    return full;
  }
}

/** Write then rename: a reader never sees half an object or half a manifest. */
async function writeTemp(target: string, bytes: Uint8Array): Promise<string> {
  const tmp = `${target}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  await writeFile(tmp, bytes);
  return tmp;
}

/**
 * Takes `lock` (created exclusively; it names its holder: host, pid and a nonce) and returns
 * its release. A lock whose holder was a process of this host that no longer runs (killed
 * while it held the lock) is stale: it is removed, if it is still that very lock, and taken
 * again. A lock held by a live process, or by another host (which cannot be checked), is a
 * precondition failure, as before.
 */
async function takeLock(lock: string, path: string): Promise<() => Promise<void>> {
  const holder = `${hostname()} ${process.pid} ${randomBytes(8).toString('hex')}\n`;
  // Written aside then linked: the lock appears with its holder in it, or not at all.
  const mine = await writeTemp(lock, new TextEncoder().encode(holder));
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(mine, lock);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const seen = attempt === 0 ? await readFile(lock, 'utf8').catch(() => null) : null;
        if (seen === null || !isStale(seen)) throw new PreconditionFailedError(path);
        // Only the stale lock read above goes: another writer may have replaced it meanwhile.
        if ((await readFile(lock, 'utf8').catch(() => null)) !== seen) throw new PreconditionFailedError(path);
        await rm(lock, { force: true });
      }
    }
  } finally {
    await rm(mine, { force: true });
  }
  return async () => {
    if ((await readFile(lock, 'utf8').catch(() => null)) === holder) await rm(lock, { force: true });
  };
}

/** A lock written by a process of this host that has exited. */
function isStale(content: string): boolean {
  const [host, pid] = content.split(' ');
  if (host !== hostname() || !/^\d+$/.test(pid ?? '')) return false;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function listDirs(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
