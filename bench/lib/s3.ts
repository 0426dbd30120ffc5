/** s3rver (from node_modules) as a child process on 127.0.0.1, and uploads to it. */
import { createReadStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort, pinned, spawnLogged, waitAnswering, type Spawned } from './proc.js';

export const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' } as const;

export interface LocalS3 {
  readonly endpoint: string;
  readonly bucket: string;
  readonly client: S3Client;
  readonly proc: Spawned;
  put(key: string, file: string): Promise<void>;
  putBytes(key: string, bytes: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

export async function startS3(bucket: string, cpus?: string): Promise<LocalS3> {
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-bench-s3-'));
  const port = await freePort();
  const bin = join(dirname(createRequire(import.meta.url).resolve('s3rver/package.json')), 'bin/s3rver.js');
  const proc = spawnLogged(pinned(cpus, [process.execPath, bin, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '-s', '--configure-bucket', bucket]));
  const endpoint = `http://127.0.0.1:${port}`;
  await waitAnswering(
    endpoint,
    () => `s3rver did not start:\n${proc.output()}`,
    30_000,
    () => proc.child.exitCode !== null,
  );
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_ENV.AWS_ACCESS_KEY_ID, secretAccessKey: S3_ENV.AWS_SECRET_ACCESS_KEY },
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    bucket,
    client,
    proc,
    async put(key, file) {
      const size = (await stat(file)).size;
      // Streamed: a snapshot can be larger than a Buffer may be.
      await client.send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: size < 64 * 2 ** 20 ? await readFile(file) : createReadStream(file), ContentLength: size }),
      );
    },
    async putBytes(key, bytes) {
      await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentLength: bytes.byteLength }));
    },
    async close() {
      client.destroy();
      await proc.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
