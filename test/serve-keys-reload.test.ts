/**
 * The keys file of a running `pitcache serve` (two serving threads) is reloaded when it
 * changes, polled at the refresh interval, and on SIGHUP; from a folder and from S3
 * (s3rver). A removed key is refused within one interval, a malformed file is refused and
 * logged while the keys in force stay.
 *
 * The tests wait on events: the server's log lines, and on S3 the polls themselves in
 * s3rver's request log. "Within one interval" is asserted there as what it means on a
 * machine of any speed: the first poll that arrives after the change reads it and applies
 * it, and the polls come on their own, an interval apart (the watcher's schedule itself is
 * pinned on injected timers in test/auth-keys-reload.test.ts). Real-time bounds only turn a
 * broken server into a failure: a server process with two serving threads, started through
 * tsx, took over a minute to get ready on a machine whose cores other suites kept busy.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startS3rver, type S3Request, type TestS3 } from './support/s3rver.js';
import { startServeProcess, TWO_ZONES, writeGridStress, type LogLine, type ServeProcess } from './support/serve-process.js';

const READY_BOUND_MS = 240_000;
const EVENT_BOUND_MS = 120_000;
const TEST_BOUND_MS = 600_000;
const INTERVAL_MS = 1000;
const KEYS = 'conf/keys.json';

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

/**
 * Asks until every request with key `id` answers `status` (the loading thread hands a new key
 * set to the serving threads by message: a request can reach a thread a moment before it);
 * resolves with the ms it took.
 */
async function until(p: ServeProcess, id: string, status: number, boundMs = EVENT_BOUND_MS): Promise<number> {
  const started = Date.now();
  for (;;) {
    const got = await statuses(p, id, 4);
    if (got.every((s) => s === status)) return Date.now() - started;
    if (Date.now() - started > boundMs) throw new Error(`key ${id} still answers ${got.join(',')} after ${boundMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const refusedLine = (l: LogLine): boolean => l.msg === 'new keys file refused; keeping the keys in force';

interface Store {
  readonly name: string;
  /** the --keys value and the flags to reach it */
  args(): string[];
  env(): NodeJS.ProcessEnv;
  put(text: string): Promise<void>;
  /** the running server's reads of the keys file as the store saw them, when it can tell (S3: s3rver's request log) */
  reads?(): readonly S3Request[];
}

/** s3rver's requests before the running server started (those of earlier tests, the writes before the start) */
let startedAt = 0;

const isRead = (r: S3Request): boolean => r.method === 'GET' && r.key === KEYS;
const isWrite = (r: S3Request): boolean => r.method === 'PUT' && r.key === KEYS;

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
  put: async (text) => void (await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: KEYS, Body: text }))),
  reads: () => s3.requests.slice(startedAt).filter(isRead),
};

/**
 * S3: the first poll after the change read it (200, the new object's etag) and applied it:
 * every later poll finds it unchanged (304). A poll that missed the change shows as a 304
 * or the old object first; a read the server did not keep, as a second 200. A poll that
 * arrived while the write was under way may have read either object: it may be the one
 * that read the change, or come before it.
 */
function expectFirstPollApplied(): void {
  const write = s3.requests.filter(isWrite).at(-1)!;
  const reads = s3.requests.filter((r) => isRead(r) && r.arrived > write.arrived).sort((x, y) => x.arrived - y.arrived);
  const firstAfter = reads.findIndex((r) => r.arrived >= write.answeredBefore);
  const applied = reads.findIndex((r) => r.status === 200 && r.etag === write.etag);
  const story = JSON.stringify(reads.map((r) => [r.status, r.etag === write.etag ? 'new' : 'old', r.arrived >= write.answeredBefore ? 'after' : 'during']));
  expect(write.etag, 'the write answered with its etag').not.toBeNull();
  expect(applied, `a poll read the change: ${story}`).toBeGreaterThanOrEqual(0);
  expect(applied, `the first poll after the change read it: ${story}`).toBeLessThanOrEqual(firstAfter === -1 ? Infinity : firstAfter);
  expect(
    reads.slice(applied + 1).map((r) => r.status),
    `and applied it: ${story}`,
  ).toEqual(reads.slice(applied + 1).map(() => 304));
}

const serve = (store: Store, refreshSeconds: number, workers: number): Promise<ServeProcess> => {
  startedAt = s3.requests.length;
  return startServeProcess(
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
    READY_BOUND_MS,
  );
};

describe.each([
  [folder.name, folder],
  [bucket.name, bucket],
])('keys file reload from %s', (_name, store) => {
  it(
    'polled at the refresh interval: a removed key is refused within one interval; a malformed file is refused and logged, the old keys stay',
    async () => {
      await store.put(keysJson(['a', 'b']));
      proc = await serve(store, INTERVAL_MS / 1000, 2);
      const p = proc;
      expect(await statuses(p, 'b')).toEqual(Array(8).fill(200));
      if (store.reads !== undefined) {
        // Polled on its own: two polls after start-up's read find nothing new (304), an
        // interval apart at least (a poll is set an interval after the last one's answer).
        await s3.whenRequests(isRead, s3.requests.slice(0, startedAt).filter(isRead).length + 3, EVENT_BOUND_MS);
        const [first, second, third] = store.reads();
        expect([first!.status, second!.status, third!.status]).toEqual([200, 304, 304]);
        expect(third!.at - second!.at).toBeGreaterThanOrEqual(INTERVAL_MS - 5);
      }

      await store.put(keysJson(['a']));
      let took = await until(p, 'b', 401);
      if (store.reads !== undefined) {
        expectFirstPollApplied();
      } else {
        // A folder's reads are not seen: one interval of 1 s, plus the time to notice on a busy machine.
        expect(took).toBeLessThan(INTERVAL_MS + 4000);
      }
      expect(await statuses(p, 'b')).toEqual(Array(8).fill(401));
      expect(await statuses(p, 'a')).toEqual(Array(8).fill(200));
      expect(p.logs().find((l) => l.msg === 'keys reloaded')).toMatchObject({ level: 'info', count: 1 });

      await store.put(MALFORMED);
      const refused = await p.waitLog(refusedLine, EVENT_BOUND_MS);
      expect(refused.level).toBe('error');
      expect(String(refused['error'])).toMatch(/keys\.json/);
      expect(await statuses(p, 'a')).toEqual(Array(8).fill(200));
      expect(await statuses(p, 'b')).toEqual(Array(8).fill(401));

      // Fixed: the next poll applies it.
      await store.put(keysJson(['c']));
      took = await until(p, 'c', 200);
      if (store.reads !== undefined) {
        expectFirstPollApplied();
      } else {
        expect(took).toBeLessThan(INTERVAL_MS + 4000);
      }
      expect(await statuses(p, 'a')).toEqual(Array(8).fill(401));
    },
    TEST_BOUND_MS,
  );

  it(
    'on SIGHUP, without polling',
    async () => {
      await store.put(keysJson(['a']));
      proc = await serve(store, 0, 2);
      const p = proc;
      expect(await statuses(p, 'a', 4)).toEqual([200, 200, 200, 200]);
      await store.put(keysJson(['c']));
      await new Promise((r) => setTimeout(r, 300));
      // Nothing polls: the old keys are in force until the signal.
      expect(await statuses(p, 'c', 4)).toEqual([401, 401, 401, 401]);
      if (store.reads !== undefined) expect(store.reads(), 'start-up read the file once, nothing since').toHaveLength(1);
      p.child.kill('SIGHUP');
      await p.waitLog((l) => l.msg === 'keys reloaded', EVENT_BOUND_MS);
      await until(p, 'c', 200);
      expect(await statuses(p, 'c')).toEqual(Array(8).fill(200));
      expect(await statuses(p, 'a')).toEqual(Array(8).fill(401));
      // A malformed file on SIGHUP: refused, logged, and the keys stay.
      await store.put(MALFORMED);
      p.child.kill('SIGHUP');
      await p.waitLog(refusedLine, EVENT_BOUND_MS);
      expect(await statuses(p, 'c', 4)).toEqual([200, 200, 200, 200]);
      expect(p.child.exitCode).toBeNull();
    },
    TEST_BOUND_MS,
  );
});
