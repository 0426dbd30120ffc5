import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';

/** What a Koa middleware sees of a request (s3rver is a Koa application). */
interface KoaContext {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly response: { get(field: string): string };
}

/** The part of s3rver (CommonJS, untyped) the tests use. */
interface S3rverInstance {
  run(): Promise<AddressInfo>;
  /** the HTTP server, once `run` resolved */
  readonly httpServer?: Server;
  close(): Promise<void>;
  /** Koa's middleware list, composed when the server starts listening */
  readonly middleware: Array<(ctx: KoaContext, next: () => Promise<void>) => Promise<void>>;
}
type S3rverCtor = new (options: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: Array<{ name: string }>;
}) => S3rverInstance;

const S3rver = createRequire(import.meta.url)('s3rver') as S3rverCtor;

/** One request s3rver answered, in the order it answered them. */
export interface S3Request {
  readonly method: string;
  /** the key within the bucket (path-style: the bucket's name taken off) */
  readonly key: string;
  readonly status: number;
  /** its place in the order requests arrived (0 first) */
  readonly arrived: number;
  /** how many requests had arrived when it was answered: a request with `arrived` >= this came after the answer */
  readonly answeredBefore: number;
  /** Date.now() when it was answered */
  readonly at: number;
  /** the answer's ETag header (a read's object, a write's new object), or null */
  readonly etag: string | null;
}

export interface TestS3 {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly bucket: string;
  /** A client for seeding and inspecting the bucket directly. */
  readonly client: S3Client;
  /** every request answered so far: what a test waits on and counts, instead of time */
  readonly requests: readonly S3Request[];
  /** resolves once `n` answered requests match (from the start), with the n-th; fails after `boundMs` (a broken server) */
  whenRequests(match: (r: S3Request) => boolean, n: number, boundMs: number): Promise<S3Request>;
  close(): Promise<void>;
}

/** A client configured the way s3rver needs (see the notes in the S3 source tests). */
export function testS3Client(endpoint: string, maxAttempts = 1): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts,
  });
}

/**
 * A real S3 protocol server on 127.0.0.1 and a free port, storing into a temp folder.
 *
 * It keeps idle keep-alive connections open instead of closing them after Node's 5 s. A
 * client that reuses a pooled connection just as the store closes it gets "socket hang up"
 * (the product's source retries it: loader-s3-faults.test.ts closes one on purpose through
 * the fault proxy's `dropReused`). Left to the clock, that close failed tests of one attempt
 * whenever a loaded machine left 5 s between two requests, and ended a read the fault proxy
 * held silent before the test let the stall time pass: failures of timing, not of what the
 * tests check.
 */
export async function startS3rver(bucket = 'snapshots'): Promise<TestS3> {
  const directory = await mkdtemp(join(tmpdir(), 'pitcache-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const requests: S3Request[] = [];
  const waiters: Array<() => void> = [];
  // First in the chain, so it sees every answer as it leaves.
  let arrivals = 0;
  server.middleware.unshift(async (ctx, next) => {
    const arrived = arrivals++;
    try {
      await next();
    } finally {
      const prefix = `/${bucket}/`;
      const key = ctx.path.startsWith(prefix) ? decodeURIComponent(ctx.path.slice(prefix.length)) : ctx.path;
      requests.push({ method: ctx.method, key, status: ctx.status, arrived, answeredBefore: arrivals, at: Date.now(), etag: ctx.response.get('etag') || null });
      for (const w of waiters.splice(0)) w();
    }
  });
  const whenRequests = (match: (r: S3Request) => boolean, n: number, boundMs: number): Promise<S3Request> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        done = true;
        reject(new Error(`s3rver answered ${requests.filter(match).length} of the ${n} matching requests waited for in ${boundMs} ms`));
      }, boundMs);
      let done = false;
      const look = (): void => {
        if (done) return;
        const seen = requests.filter(match);
        if (seen.length >= n) {
          done = true;
          clearTimeout(timer);
          resolve(seen[n - 1]!);
        } else waiters.push(look);
      };
      look();
    });
  const { port } = await server.run();
  // 0 turns Node's keep-alive timeout off: the connection stays until the client closes it.
  server.httpServer!.keepAliveTimeout = 0;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = testS3Client(endpoint);
  return {
    endpoint,
    bucket,
    client,
    requests,
    whenRequests,
    async close() {
      client.destroy();
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
