import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { S3Client } from '@aws-sdk/client-s3';
import { parseStoreLocation } from './location.js';
import { systemClock, type Clock } from '../time/clock.js';
import { activeTimers, sleep, type Timers } from '../time/timers.js';
import { constants } from 'node:buffer';
import { OpsError } from '../ops-errors.js';
import { collectBody, streamBody } from './s3-body.js';
import { buildS3Client } from './s3-client.js';
import {
  S3PreconditionFailedError,
  S3SourceError,
  StallError,
  TruncatedBodyError,
  describeCause,
  httpStatus,
  isNoSuchKey,
  isPreconditionFailed,
  isRetryable,
} from './s3-errors.js';
import type { S3Operation } from './s3-errors.js';
import { StallWatchdog } from './s3-watchdog.js';
import { PreconditionFailedError } from './snapshot-source.js';
import { ObjectMissingError } from './snapshot-source.js';
import type { ConditionalRead, DatasetRef, ListedObject, PrunableSource, WriteCondition, WriteResult } from './snapshot-source.js';

/**
 * `enforced`: the store applies If-Match / If-None-Match on PUT atomically (AWS S3 does).
 * `unsupported`: it ignores them (s3rver, older MinIO, some gateways); the source then
 * compares etags itself just before the put. That check and the put are two requests, so
 * a publisher racing in between can still be overwritten: it catches a stale publisher,
 * not a simultaneous one, and the write reports `enforced: false`.
 */
export type ConditionalWrites = 'enforced' | 'unsupported';

export interface S3SourceOptions {
  readonly endpoint?: string;
  readonly forcePathStyle?: boolean;
  readonly region?: string;
  /** Abort a request when no bytes arrived for this long (default 30000). */
  readonly stallTimeoutMs?: number;
  /** Attempts per operation, the first included (default 3). */
  readonly maxAttempts?: number;
  /** Backoff before attempt n+1 is about retryBaseMs * 2^(n-1), capped at retryMaxMs. */
  readonly retryBaseMs?: number;
  readonly retryMaxMs?: number;
  readonly conditionalWrites?: ConditionalWrites;
  /**
   * A streamed read of an object larger than this (its size known from its manifest) is
   * made of ranged GETs of this many bytes, `rangeParallel` at once (default 32 MiB, 4):
   * one connection rarely fills the bandwidth of a store like S3.
   */
  readonly rangeBytes?: number;
  readonly rangeParallel?: number;
  /** Keys per ListObjectsV2 page (default: the store's, 1000 on S3). */
  readonly listPageSize?: number;
  /**
   * A ready client (tests, custom credentials). It is used as is: give it maxAttempts 1 or
   * its retries multiply with the source's. Not destroyed by close().
   */
  readonly client?: S3Client;
  /** the retry backoff and the stall watchdog wait on these (default: real, referenced) */
  readonly timers?: Timers;
  /** the stall watchdog reads progress times from this */
  readonly clock?: Clock;
  /** [0, 1): jitter of the backoff. */
  readonly random?: () => number;
}

const DEFAULTS = { stallTimeoutMs: 30_000, maxAttempts: 3, retryBaseMs: 200, retryMaxMs: 5_000, rangeBytes: 32 * 1024 * 1024, rangeParallel: 4 };

/**
 * What one attempt gets: the abort signal of its request, and a way to report bytes. An
 * operation whose body the SDK reads itself (a listing page, a HEAD) never reports
 * progress, so for it the watchdog is a deadline of stallTimeoutMs on a small response.
 */
interface Attempt {
  readonly signal: AbortSignal;
  readonly progress: () => void;
}

/** Snapshots in an S3 bucket (or an S3-compatible store) under `s3://bucket/prefix`. */
export class S3Source implements PrunableSource {
  readonly description: string;
  readonly bucket: string;
  /** No leading or trailing `/`; may be empty. */
  readonly prefix: string;
  private readonly client: S3Client;
  private readonly ownsClient: boolean;
  private readonly stallTimeoutMs: number;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly conditionalWrites: ConditionalWrites;
  private readonly listPageSize: number | undefined;
  private readonly rangeBytes: number;
  private readonly rangeParallel: number;
  private readonly timers: Timers;
  private readonly clock: Clock;
  private readonly random: () => number;

  constructor(location: string, options: S3SourceOptions = {}) {
    const parsed = parseStoreLocation(location);
    if (typeof parsed === 'string' || parsed.kind !== 's3') {
      throw new Error(`S3 source ${JSON.stringify(location)}: ${typeof parsed === 'string' ? parsed : 'must be s3://bucket/prefix'}`);
    }
    this.description = location;
    this.bucket = parsed.bucket;
    this.prefix = parsed.path;
    this.stallTimeoutMs = positive(options.stallTimeoutMs ?? DEFAULTS.stallTimeoutMs, 'stallTimeoutMs');
    this.maxAttempts = positive(options.maxAttempts ?? DEFAULTS.maxAttempts, 'maxAttempts');
    this.retryBaseMs = options.retryBaseMs ?? DEFAULTS.retryBaseMs;
    this.retryMaxMs = options.retryMaxMs ?? DEFAULTS.retryMaxMs;
    this.conditionalWrites = options.conditionalWrites ?? 'enforced';
    this.listPageSize = options.listPageSize;
    this.rangeBytes = positive(options.rangeBytes ?? DEFAULTS.rangeBytes, 'rangeBytes');
    this.rangeParallel = positive(options.rangeParallel ?? DEFAULTS.rangeParallel, 'rangeParallel');
    this.timers = options.timers ?? activeTimers;
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.ownsClient = options.client === undefined;
    this.client =
      options.client ??
      buildS3Client({ endpoint: options.endpoint, forcePathStyle: options.forcePathStyle, region: options.region, stallTimeoutMs: this.stallTimeoutMs });
  }

  /** Closes the pooled connections of a client the source built itself. */
  close(): void {
    if (this.ownsClient) this.client.destroy();
  }

  async listDatasets(): Promise<DatasetRef[]> {
    const root = this.prefix === '' ? '' : this.prefix + '/';
    const found: DatasetRef[] = [];
    let token: string | undefined;
    do {
      const page = await this.run('ListObjectsV2', `s3://${this.bucket}/${root}`, ({ signal }) =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: root, ContinuationToken: token, MaxKeys: this.listPageSize }), {
          abortSignal: signal,
        }),
      );
      for (const object of page.Contents ?? []) {
        const parts = (object.Key ?? '').slice(root.length).split('/');
        const [productId, dataset, name] = parts;
        if (parts.length === 3 && productId && dataset && name === 'manifest.json') found.push({ productId, dataset });
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return found.sort((a, b) => compare(`${a.productId}/${a.dataset}`, `${b.productId}/${b.dataset}`));
  }

  async listObjects(prefix: string): Promise<ListedObject[]> {
    const root = this.prefix === '' ? '' : this.prefix + '/';
    const found: ListedObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.run('ListObjectsV2', `s3://${this.bucket}/${root}${prefix}`, ({ signal }) =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: root + prefix, ContinuationToken: token, MaxKeys: this.listPageSize }), {
          abortSignal: signal,
        }),
      );
      for (const object of page.Contents ?? []) found.push({ path: (object.Key ?? '').slice(root.length), bytes: object.Size ?? 0 });
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return found.sort((a, b) => compare(a.path, b.path));
  }

  async deleteObject(path: string): Promise<void> {
    const key = this.key(path);
    await this.run('DeleteObject', this.address(key), ({ signal }) =>
      this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal }),
    );
  }

  async readIfChanged(path: string, etag: string | null): Promise<ConditionalRead> {
    const key = this.key(path);
    return this.run('GetObject', this.address(key), async ({ signal, progress }) => {
      let response;
      try {
        const ifNoneMatch = etag === null || etag === '' ? undefined : etag;
        response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, IfNoneMatch: ifNoneMatch }), { abortSignal: signal });
      } catch (e) {
        // The SDK reports 304 Not Modified as an error; it carried no body.
        if (httpStatus(e) === 304) return { status: 'unchanged' } as const;
        if (isNoSuchKey(e)) return { status: 'missing' } as const;
        throw e;
      }
      progress();
      const bytes = await collectBody(response.Body, response.ContentLength, undefined, progress, signal);
      // Without an ETag there is nothing to send next time; '' makes the next read unconditional.
      return { status: 'ok', bytes, etag: response.ETag ?? '' } as const;
    });
  }

  async readObject(path: string, sizeHint?: number): Promise<Uint8Array> {
    const key = this.key(path);
    return this.run('GetObject', this.address(key), async ({ signal, progress }) => {
      let response;
      try {
        response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
      } catch (e) {
        if (isNoSuchKey(e)) throw new ObjectMissingError(path);
        throw e;
      }
      progress();
      return collectBody(response.Body, response.ContentLength, sizeHint, progress, signal);
    });
  }

  /**
   * The object's bytes, each stretch handed to `onBytes` in order as it arrives. Up to
   * rangeBytes (or of unknown size): one GET, a retry resuming where the bytes stopped.
   * Larger: ranged GETs, rangeParallel at once, each retried on its own from where it
   * stopped; bytes are handed over as the stretch from the start grows.
   */
  async readObjectStreaming(path: string, sizeHint: number | undefined, onBytes: (bytes: Uint8Array) => void): Promise<Uint8Array> {
    const key = this.key(path);
    if (sizeHint === undefined || sizeHint <= this.rangeBytes) {
      const read = { out: null as Uint8Array | null, got: 0, handed: 0 };
      await this.readRange(path, key, read, 0, undefined, () => onBytes(read.out!.subarray(read.handed, read.got)));
      return read.out!;
    }
    if (sizeHint > constants.MAX_LENGTH) throw new Error(`object of ${sizeHint} bytes is larger than the largest buffer (${constants.MAX_LENGTH})`);
    const out = new Uint8Array(sizeHint);
    const size = this.rangeBytes;
    const ranges = Array.from({ length: Math.ceil(sizeHint / size) }, (_, i) => ({
      out: out as Uint8Array | null,
      got: 0,
      start: i * size,
      end: Math.min(sizeHint, (i + 1) * size),
    }));
    let handed = 0;
    let head = 0;
    const advance = (): void => {
      while (head < ranges.length) {
        const r = ranges[head]!;
        const upTo = r.start + r.got;
        if (upTo > handed) {
          onBytes(out.subarray(handed, upTo));
          handed = upTo;
        }
        if (upTo < r.end) return;
        head++;
      }
    };
    let failure: { error: unknown } | null = null;
    let next = 0;
    const lane = async (): Promise<void> => {
      while (failure === null && next < ranges.length) {
        const r = ranges[next++]!;
        try {
          await this.readRange(path, key, r, r.start, r.end, advance, sizeHint);
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.rangeParallel, ranges.length) }, lane));
    if (failure !== null) throw (failure as { error: unknown }).error;
    return out;
  }

  /**
   * Bytes [start, end) of an object (end undefined: to its end, `read.out` allocated from
   * the answer's length) into `read.out` at their offset, `read.got` of them so far; a retry
   * asks for the rest only. `total`: the object's size as the manifest says.
   */
  private async readRange(
    path: string,
    key: string,
    read: { out: Uint8Array | null; got: number; handed?: number },
    start: number,
    end: number | undefined,
    arrived: () => void,
    total?: number,
  ): Promise<void> {
    await this.run('GetObject', this.address(key), async ({ signal, progress }) => {
      const from = start + read.got;
      if (read.out !== null && end !== undefined && from >= end) return;
      const whole = read.out === null;
      const range = whole ? undefined : `bytes=${from}-${end === undefined ? '' : end - 1}`;
      let response;
      try {
        response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range }), { abortSignal: signal });
      } catch (e) {
        if (isNoSuchKey(e)) throw new ObjectMissingError(path);
        throw e;
      }
      progress();
      const length = response.ContentLength;
      if (whole) {
        if (length === undefined) {
          // No length to place the bytes by: the body whole, handed over at once.
          read.out = await collectBody(response.Body, undefined, undefined, progress, signal);
          read.handed = 0;
          read.got = read.out.byteLength;
          arrived();
          return;
        }
        if (length > constants.MAX_LENGTH) throw new Error(`object of ${length} bytes is larger than the largest buffer (${constants.MAX_LENGTH})`);
        read.out = new Uint8Array(length);
        end = length;
      } else {
        const size = /\/(\d+)$/.exec(response.ContentRange ?? '')?.[1];
        if (total !== undefined && size !== undefined && Number(size) !== total) {
          throw new ObjectSizeError(path, Number(size), total);
        }
        if (length !== end! - from) throw new Error(`a ranged read of ${from}-${end! - 1} answered ${length} bytes`);
      }
      const out = read.out!;
      const stop = end!;
      await streamBody(response.Body, signal, (chunk) => {
        progress();
        const at = start + read.got;
        if (at + chunk.byteLength > stop) throw new Error(`body is longer than its Content-Length ${stop - start}`);
        out.set(chunk, at);
        read.handed = at;
        read.got += chunk.byteLength;
        arrived();
      });
      if (start + read.got !== stop) throw new TruncatedBodyError(read.got, stop - start);
    });
  }

  /**
   * A retried conditional put can meet its own first attempt: when the store applied the
   * write but the answer was lost (a reset, a 500 after commit), the retry is refused with
   * PreconditionFailedError although the object now holds these bytes. A publisher that
   * sees the conflict re-reads the manifest, so it finds its own generation there.
   */
  async writeObject(path: string, bytes: Uint8Array, condition?: WriteCondition): Promise<WriteResult> {
    const key = this.key(path);
    const enforced = condition !== undefined && this.conditionalWrites === 'enforced';
    if (condition !== undefined && !enforced) await this.checkCondition(path, key, condition);
    const header = enforced ? ('ifMatch' in condition ? { IfMatch: condition.ifMatch } : { IfNoneMatch: condition.ifNoneMatch }) : {};
    const put = await this.run(
      'PutObject',
      this.address(key),
      async () => {
        try {
          return await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength, ...header }));
        } catch (e) {
          if (isPreconditionFailed(e)) throw new S3PreconditionFailedError(path, 'PutObject', this.address(key), false);
          throw e;
        }
      },
      // An upload sends bytes but receives none until the end: the client's socket idle
      // timeout guards it instead of the receive watchdog.
      { watchdog: false },
    );
    return { etag: put.ETag ?? null, enforced };
  }

  /** The emulation of conditional writes for stores that ignore them (see ConditionalWrites). */
  private async checkCondition(path: string, key: string, condition: WriteCondition): Promise<void> {
    const current = await this.run('HeadObject', this.address(key), async ({ signal }) => {
      try {
        const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }), { abortSignal: signal });
        return head.ETag ?? null;
      } catch (e) {
        if (isNoSuchKey(e)) return undefined;
        throw e;
      }
    });
    const ok = 'ifMatch' in condition ? current === condition.ifMatch : current === undefined;
    if (!ok) throw new S3PreconditionFailedError(path, 'PutObject', this.address(key), true);
  }

  /**
   * Runs one operation with the stall watchdog and the retry policy. Errors that are
   * answers (PreconditionFailedError, a missing object) pass through untouched; any other
   * failure becomes an S3SourceError naming the operation and the address.
   */
  private async run<T>(
    operation: S3Operation,
    address: string,
    attempt: (a: Attempt) => Promise<T>,
    opts: { watchdog: boolean } = { watchdog: true },
  ): Promise<T> {
    for (let n = 1; ; n++) {
      const controller = new AbortController();
      const stall = new StallError(this.stallTimeoutMs);
      const watchdog = opts.watchdog ? new StallWatchdog(this.stallTimeoutMs, () => controller.abort(stall), this.timers, this.clock) : null;
      try {
        return await attempt({ signal: controller.signal, progress: watchdog?.touch ?? noop });
      } catch (e) {
        if (e instanceof PreconditionFailedError || e instanceof ObjectMissingError || e instanceof ObjectSizeError || e instanceof S3SourceError) throw e;
        // An abort surfaces as whatever the SDK or the stream makes of it; the watchdog knows.
        const cause = watchdog?.stalled === true ? stall : e;
        if (n >= this.maxAttempts || !isRetryable(cause)) {
          throw new S3SourceError(operation, address, describeCause(cause), n, 'failed', cause);
        }
      } finally {
        watchdog?.stop();
      }
      await sleep(this.timers, this.backoff(n));
    }
  }

  /** Capped exponential, with half of it jittered so many servers do not retry in step. */
  private backoff(n: number): number {
    const ceiling = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** (n - 1));
    return ceiling / 2 + (ceiling / 2) * this.random();
  }

  private key(path: string): string {
    if (path === '' || path.startsWith('/') || path.split('/').some((p) => p === '' || p === '.' || p === '..')) {
      throw new Error(`S3 source ${this.description}: invalid object path ${JSON.stringify(path)}`);
    }
    return this.prefix === '' ? path : `${this.prefix}/${path}`;
  }

  private address(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }
}

function positive(value: number, name: string): number {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`S3 source: ${name} must be a positive number, got ${value}`);
  return value;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function noop(): void {}

/** An object whose size is not the one its manifest names: a broken publication, refused like a wrong sha256. */
export class ObjectSizeError extends OpsError {
  constructor(path: string, actual: number, manifest: number) {
    super('checksum_mismatch', `${path} is ${actual} bytes, its manifest says ${manifest}`);
    this.name = 'ObjectSizeError';
  }
}
