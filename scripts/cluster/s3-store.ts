/**
 * s3rver (from node_modules) as a child process on 127.0.0.1: the cluster's only source of
 * truth. Snapshots reach it through `pitcache publish`; the keys file is written directly.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from '../../bench/lib/proc.js';
import type { Children } from './children.js';
import { tail } from './children.js';

/** What the replicas and the publisher need to reach s3rver (it accepts these fixed credentials). */
export const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' } as const;

export class S3Store {
  private constructor(
    readonly endpoint: string,
    readonly bucket: string,
    private readonly client: S3Client,
  ) {}

  static async start(children: Children, bucket: string): Promise<S3Store> {
    const dir = children.tempDir('s3');
    const port = await freePort();
    const bin = join(dirname(createRequire(import.meta.url).resolve('s3rver/package.json')), 'bin/s3rver.js');
    // s3rver encrypts ListObjectsV2 continuation tokens with DES-CBC, which OpenSSL 3 keeps
    // in its legacy provider (see vitest.config.ts); only s3rver gets the flag.
    const child = children.spawn([process.execPath, bin, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '-s', '--configure-bucket', bucket], {
      env: { ...process.env, NODE_OPTIONS: '--openssl-legacy-provider' },
    });
    const output = tail(child);
    const endpoint = `http://127.0.0.1:${port}`;
    const end = Date.now() + 30_000;
    for (;;) {
      try {
        await (await fetch(endpoint)).arrayBuffer();
        break;
      } catch {
        if (Date.now() > end || child.exitCode !== null) throw new Error(`s3rver did not start:\n${output()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const client = new S3Client({
      endpoint,
      region: S3_ENV.AWS_REGION,
      forcePathStyle: true,
      credentials: { accessKeyId: S3_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: S3_ENV.AWS_SECRET_ACCESS_KEY },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    return new S3Store(endpoint, bucket, client);
  }

  /** `s3://bucket/key` */
  url(key: string): string {
    return `s3://${this.bucket}/${key}`;
  }

  /** The flags a `pitcache` command needs to reach this store. */
  cliFlags(): string[] {
    return ['--s3-endpoint', this.endpoint, '--s3-force-path-style'];
  }

  async put(key: string, body: string): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body }));
  }

  /**
   * The object's ETag, or null when there is none. A HEAD, not a GET: s3rver rewrites an
   * object's file in place, and a body read racing a PUT can come back cut short.
   */
  async etag(key: string): Promise<string | null> {
    try {
      return (await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }))).ETag ?? null;
    } catch (e) {
      if ((e as { name?: string }).name === 'NotFound') return null;
      throw e;
    }
  }

  close(): void {
    this.client.destroy();
  }
}
