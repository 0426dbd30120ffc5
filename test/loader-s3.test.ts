import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { S3Source } from '../src/source/s3-source.js';
import { StallWatchdog } from '../src/source/s3-watchdog.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import type { S3SourceOptions } from '../src/source/s3-source.js';
import { describeSnapshotSourceContract } from './support/loader-suite.js';
import { startS3rver, testS3Client } from './support/s3rver.js';
import type { TestS3 } from './support/s3rver.js';

/*
 * S3Source against s3rver, a real S3 protocol server. The source builds its own client
 * from an endpoint, the way `pitcache serve --s3-endpoint` does; credentials reach it
 * through the standard AWS chain (here: the environment), the region falls back to
 * us-east-1. s3rver ignores conditional PUT headers, so conditional writes run in the
 * 'unsupported' emulation.
 */

let s3: TestS3;
let run = 0;
const sources: S3Source[] = [];

beforeAll(async () => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'S3RVER');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'S3RVER');
  s3 = await startS3rver();
});

afterAll(async () => {
  for (const source of sources) source.close();
  await s3?.close();
  vi.unstubAllEnvs();
});

function openS3(prefix: string, options: S3SourceOptions = {}): S3Source {
  const source = new S3Source(`s3://${s3.bucket}/${prefix}`, { endpoint: s3.endpoint, forcePathStyle: true, conditionalWrites: 'unsupported', ...options });
  sources.push(source);
  return source;
}

async function put(key: string, body: string): Promise<void> {
  await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
}

describeSnapshotSourceContract(
  "S3Source against s3rver (conditionalWrites: 'unsupported')",
  async () => {
    // A fresh prefix per test keeps the tests apart in one bucket.
    const source = openS3(`contract/run-${++run}`);
    return { source, cleanup: async () => source.close() };
  },
  { conditionalWrites: 'emulated' },
);

describe('S3Source specifics', () => {
  it('lists datasets across many pages and only under its own prefix', async () => {
    const source = openS3('paged/root', { listPageSize: 2 });
    const expected = [];
    for (let i = 0; i < 5; i++) {
      await put(`paged/root/prod/ds${i}/manifest.json`, '{}');
      await put(`paged/root/prod/ds${i}/snapshots/00000001.arrow`, 'x');
      expected.push({ productId: 'prod', dataset: `ds${i}` });
    }
    // Same leading characters, another prefix: `paged/root` must not match `paged/rootless`.
    await put('paged/rootless/prod/other/manifest.json', '{}');
    await put('paged/prod/outside/manifest.json', '{}');
    expect(await source.listDatasets()).toEqual(expected);
  });

  it('works at the bucket root (no prefix)', async () => {
    const fresh = await startS3rver('rootbucket');
    try {
      const source = new S3Source(`s3://${fresh.bucket}`, { endpoint: fresh.endpoint, forcePathStyle: true });
      sources.push(source);
      await source.writeObject('p/d/manifest.json', new TextEncoder().encode('{}'));
      expect(await source.listDatasets()).toEqual([{ productId: 'p', dataset: 'd' }]);
      const got = await fresh.client.send(new GetObjectCommand({ Bucket: fresh.bucket, Key: 'p/d/manifest.json' }));
      expect(await got.Body?.transformToString()).toBe('{}');
      source.close();
    } finally {
      await fresh.close();
    }
  });

  it('stores objects under the prefix, and hands back the S3 ETag for conditional reads', async () => {
    const source = openS3('etag/prefix');
    const written = await source.writeObject('p/d/manifest.json', new TextEncoder().encode('hello'));
    const direct = await s3.client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: 'etag/prefix/p/d/manifest.json' }));
    expect(await direct.Body?.transformToString()).toBe('hello');
    // S3's ETag of a single-part upload: the quoted MD5 of the bytes.
    expect(written.etag).toBe('"5d41402abc4b2a76b9719d911017c592"');
    expect(direct.ETag).toBe(written.etag);
  });

  it("'enforced' mode puts the conditions on the PUT itself and skips the emulation's HEAD", async () => {
    // An injected client is used as is; its middleware shows what goes on the wire.
    const client = testS3Client(s3.endpoint);
    const requests: Array<{ method: string; headers: Record<string, string> }> = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { method: string; headers: Record<string, string> };
        requests.push({ method: request.method, headers: { ...request.headers } });
        return next(args);
      },
      { step: 'finalizeRequest' },
    );
    const source = new S3Source(`s3://${s3.bucket}/enforced`, { client, conditionalWrites: 'enforced' });
    try {
      const created = await source.writeObject('p/d/manifest.json', new TextEncoder().encode('v1'), { ifNoneMatch: '*' });
      expect(created).toEqual({ etag: expect.stringMatching(/^".+"$/), enforced: true });
      const replaced = await source.writeObject('p/d/manifest.json', new TextEncoder().encode('v2'), { ifMatch: created.etag! });
      expect(replaced.enforced).toBe(true);
      expect(requests.map((r) => r.method)).toEqual(['PUT', 'PUT']);
      expect(requests[0]?.headers['if-none-match']).toBe('*');
      expect(requests[1]?.headers['if-match']).toBe(created.etag);
    } finally {
      source.close();
      client.destroy();
    }
  });

  it('refuses object paths that would leave the prefix or are not canonical', async () => {
    const source = openS3('paths');
    for (const path of ['../x', '/abs', 'a//b', 'a/./b', '']) {
      await expect(source.readObject(path), path).rejects.toThrow(/invalid object path/);
    }
  });

  it('refuses a location that is not s3://bucket/prefix, and bad numbers', () => {
    expect(() => new S3Source('/local/dir')).toThrow(/s3:\/\/bucket\/prefix/);
    expect(() => new S3Source('s3://')).toThrow(/bucket/);
    expect(() => new S3Source('s3://b/p', { maxAttempts: 0 })).toThrow(/maxAttempts/);
    expect(() => new S3Source('s3://b/p', { stallTimeoutMs: -1 })).toThrow(/stallTimeoutMs/);
  });

  it('names the bucket and key in the error for a bucket that does not exist', async () => {
    const source = new S3Source('s3://no-such-bucket/x', { endpoint: s3.endpoint, forcePathStyle: true });
    sources.push(source);
    await expect(source.readIfChanged('p/d/manifest.json', null)).rejects.toThrow(
      /^S3 GetObject s3:\/\/no-such-bucket\/x\/p\/d\/manifest\.json failed: NoSuchBucket, HTTP 404/,
    );
  });
});

describe('StallWatchdog', () => {
  it('fires once after stallMs without progress, and progress postpones it', () => {
    const timers = new ManualTimers(new ManualClock(0));
    let fired = 0;
    const watchdog = new StallWatchdog(100, () => fired++, timers, timers.clock);
    timers.advance(60);
    watchdog.touch();
    timers.advance(60);
    expect(fired).toBe(0);
    watchdog.touch();
    timers.advance(99);
    expect(fired).toBe(0);
    timers.advance(1);
    expect(fired).toBe(1);
    expect(watchdog.stalled).toBe(true);
    timers.advance(1000);
    expect(fired).toBe(1);
  });

  it('never fires once stopped', () => {
    const timers = new ManualTimers(new ManualClock(0));
    let fired = 0;
    const watchdog = new StallWatchdog(100, () => fired++, timers, timers.clock);
    timers.advance(50);
    watchdog.stop();
    timers.advance(1000);
    expect(fired).toBe(0);
    expect(watchdog.stalled).toBe(false);
  });
});
