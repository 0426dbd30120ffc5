/**
 * The keys file of a running `pitcache serve` (two serving threads) is reloaded when it
 * changes, polled at the refresh interval, and on SIGHUP; from a folder and from S3
 * (s3rver). A removed key is refused within one interval, a malformed file is refused and
 * logged while the keys in force stay.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver, type TestS3 } from './support/s3rver.js';
import { startServeProcess, TWO_ZONES, writeGridStress, type ServeProcess } from './support/serve-process.js';

const keysJson = (ids: string[]): string => JSON.stringify({ keys: ids.map((id) => ({ id, key: `secret-${id}`, products: ['*'] })) });
const MALFORMED = '{"keys": [ {"id": "x", ';

let dir: string;
let s3: TestS3;
let proc: ServeProcess | undefined;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pitcache-keys-reload-'));
  await writeGridStress(dir, TWO_ZONES);
  s3 = await startS3rver();
});
afterEach(async () => {
  await proc?.kill();
  proc = undefined;
});
afterAll(async () => {
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Statuses of `n` requests with key `id`, each on a fresh connection (so both serving threads answer some). */
async function statuses(p: ServeProcess, id: string, n = 8): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    out.push(
      await new Promise<number>((resolve, reject) => {
        const req = request(`${p.url}/pemi/grid_stress`, { agent: false, headers: { connection: 'close', 'x-api-key': `secret-${id}` } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        });
        req.on('error', reject);
        req.end();
      }),
    );
  }
  return out;
}

/** Polls until every request with key `id` answers `status`; resolves with the ms it took. */
async function until(p: ServeProcess, id: string, status: number, boundMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const got = await statuses(p, id, 4);
    if (got.every((s) => s === status)) return Date.now() - started;
    if (Date.now() - started > boundMs) throw new Error(`key ${id} still answers ${got.join(',')} after ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Store {
  readonly name: string;
  /** the --keys value and the flags to reach it */
  args(): string[];
  env(): NodeJS.ProcessEnv;
  put(text: string): Promise<void>;
}

const folder: Store = {
  name: 'a folder',
  args: () => ['--keys', join(dir, 'keys.json')],
  env: () => ({}),
  put: (text) => writeFile(join(dir, 'keys.json'), text),
};

const bucket: Store = {
  name: 'S3',
  args: () => ['--keys', `s3://${s3.bucket}/conf/keys.json`, '--s3-endpoint', s3.endpoint, '--s3-force-path-style'],
  env: () => ({ AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' }),
  put: async (text) => void (await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'conf/keys.json', Body: text }))),
};

const serve = (store: Store, refreshSeconds: number, workers: number): Promise<ServeProcess> =>
  startServeProcess(
    [
      '--source',
      join(dir, 'src'),
      ...store.args(),
      '--workers',
      String(workers),
      '--refresh-interval',
      String(refreshSeconds),
      '--drain-seconds',
      '0',
      '--auth-fail-limit',
      '0',
    ],
    store.env(),
  );

describe.each([
  [folder.name, folder],
  [bucket.name, bucket],
])('keys file reload from %s', (_name, store) => {
  it('polled at the refresh interval: a removed key is refused within one interval; a malformed file is refused and logged, the old keys stay', async () => {
    await store.put(keysJson(['a', 'b']));
    proc = await serve(store, 1, 2);
    const p = proc;
    expect(await statuses(p, 'b')).toEqual(Array(8).fill(200));

    await store.put(keysJson(['a']));
    const took = await until(p, 'b', 401, 1000 + 4000);
    // One interval of 1 s, plus the time to notice on a busy machine.
    expect(took).toBeLessThan(1000 + 4000);
    expect(await statuses(p, 'b')).toEqual(Array(8).fill(401));
    expect(await statuses(p, 'a')).toEqual(Array(8).fill(200));
    expect(p.logs().find((l) => l.msg === 'keys reloaded')).toMatchObject({ level: 'info', count: 1 });

    await store.put(MALFORMED);
    const refused = await p.waitLog((l) => l.msg === 'new keys file refused; keeping the keys in force', 5000);
    expect(refused.level).toBe('error');
    expect(String(refused['error'])).toMatch(/keys\.json/);
    expect(await statuses(p, 'a')).toEqual(Array(8).fill(200));
    expect(await statuses(p, 'b')).toEqual(Array(8).fill(401));

    // Fixed: the next poll applies it.
    await store.put(keysJson(['c']));
    await until(p, 'c', 200, 5000);
    expect(await statuses(p, 'a')).toEqual(Array(8).fill(401));
  }, 90_000);

  it('on SIGHUP, without polling', async () => {
    await store.put(keysJson(['a']));
    proc = await serve(store, 0, 2);
    const p = proc;
    expect(await statuses(p, 'a', 4)).toEqual([200, 200, 200, 200]);
    await store.put(keysJson(['c']));
    await new Promise((r) => setTimeout(r, 300));
    // Nothing polls: the old keys are in force until the signal.
    expect(await statuses(p, 'c', 4)).toEqual([401, 401, 401, 401]);
    p.child.kill('SIGHUP');
    await p.waitLog((l) => l.msg === 'keys reloaded', 5000);
    expect(await statuses(p, 'c')).toEqual(Array(8).fill(200));
    expect(await statuses(p, 'a')).toEqual(Array(8).fill(401));
    // A malformed file on SIGHUP: refused, logged, and the keys stay.
    await store.put(MALFORMED);
    p.child.kill('SIGHUP');
    await p.waitLog((l) => l.msg === 'new keys file refused; keeping the keys in force', 5000);
    expect(await statuses(p, 'c', 4)).toEqual([200, 200, 200, 200]);
    expect(p.child.exitCode).toBeNull();
  }, 90_000);
});
