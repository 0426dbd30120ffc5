import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openLocation } from '../src/source/open-source.js';
import { parseKeysFile, type KeysConfig } from '../src/auth/keys-file.js';
import { KeyRegistry } from '../src/auth/key-registry.js';
import { KeysWatcher } from '../src/auth/keys-watcher.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from './support/s3-harness.js';
import { startS3rver, testS3Client, type TestS3 } from './support/s3rver.js';

const file = (ids: string[]): string => JSON.stringify({ keys: ids.map((id) => ({ id, key: `secret-${id}`, products: ['*'] })) });

/** A store that holds one keys file: a folder, or an S3 bucket behind s3rver. */
interface Store {
  location: string;
  put(text: string): Promise<void>;
  remove(): Promise<void>;
}

let s3: TestS3;
let dir: string;
beforeAll(async () => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'S3RVER');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'S3RVER');
  s3 = await startS3rver();
  dir = await mkdtemp(join(tmpdir(), 'pitcache-keys-'));
});
afterAll(async () => {
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
  vi.unstubAllEnvs();
});

const stores: Array<[string, () => Store]> = [
  [
    'a local folder',
    () => ({
      location: join(dir, 'keys.json'),
      put: (text) => writeFile(join(dir, 'keys.json'), text),
      remove: () => rm(join(dir, 'keys.json'), { force: true }),
    }),
  ],
  [
    'S3',
    () => {
      const client = testS3Client(s3.endpoint);
      return {
        location: `s3://${s3.bucket}/conf/keys.json`,
        put: async (text) => void (await client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: 'conf/keys.json', Body: text }))),
        remove: async () => void (await client.send(new DeleteObjectCommand({ Bucket: s3.bucket, Key: 'conf/keys.json' }))),
      };
    },
  ],
];

describe.each(stores)('keys reload from %s', (_name, makeStore) => {
  it('applies a changed file within one interval, refuses a malformed one (old keys stay), ignores an unchanged one and a missing one', async () => {
    const store = makeStore();
    await store.put(file(['a', 'b']));
    const { source, name } = openLocation(store.location, { endpoint: s3.endpoint, forcePathStyle: true });
    const first = await source.readIfChanged(name, null);
    if (first.status !== 'ok') throw new Error('keys file not readable');

    let registry = new KeyRegistry(parseKeysFile(file(['a', 'b']), 'initial'));
    const applied: KeysConfig[] = [];
    const logs: string[] = [];
    const timers = new ManualTimers(new ManualClock(0));
    const watcher = new KeysWatcher(
      {
        read: (etag) => source.readIfChanged(name, etag),
        origin: store.location,
        apply: (k) => {
          applied.push(k);
          registry = new KeyRegistry(k);
        },
        timers,
        intervalMs: 10_000,
        log: (level, event) => logs.push(`${level}:${event}`),
      },
      first.etag,
    );
    watcher.start();
    expect(timers.requested).toEqual([10_000]);

    expect(await watcher.check()).toBe('unchanged');

    // Key b revoked: one poll later it is gone.
    await store.put(file(['a']));
    timers.fire();
    await timers.armed('the next poll');
    expect(applied.map((k) => k.keys.map((e) => e.id))).toEqual([['a']]);
    expect(registry.authenticate('secret-b')).toBe(-1);
    expect(registry.authenticate('secret-a')).toBeGreaterThanOrEqual(0);

    // A malformed file is refused and logged; the keys in force stay, and it is refused again until fixed.
    await store.put('{"keys": [ {"id": "x" ');
    expect(await watcher.check()).toBe('refused');
    expect(await watcher.check()).toBe('refused');
    expect(logs.filter((l) => l === 'error:new keys file refused; keeping the keys in force')).toHaveLength(2);
    expect(applied).toHaveLength(1);
    expect(registry.authenticate('secret-a')).toBeGreaterThanOrEqual(0);

    // An invalid but well-formed file (no products) is refused the same way.
    await store.put(JSON.stringify({ keys: [{ id: 'z', key: 'k' }] }));
    expect(await watcher.check()).toBe('refused');

    // A deleted file keeps the keys in force.
    await store.remove();
    expect(await watcher.check()).toBe('missing');
    expect(registry.authenticate('secret-a')).toBeGreaterThanOrEqual(0);

    // Fixed: applied at once on demand (SIGHUP calls check()).
    await store.put(file(['c']));
    expect(await watcher.check()).toBe('applied');
    expect(registry.authenticate('secret-c')).toBeGreaterThanOrEqual(0);
    expect(registry.authenticate('secret-a')).toBe(-1);
    watcher.stop();
  });
});

describe('keys watcher: polling, stopping, an unreachable file, and what it logs', () => {
  function make(location: string, intervalMs: number) {
    const { source, name } = openLocation(location);
    const logs: Array<[string, string, Record<string, unknown>]> = [];
    const applied: KeysConfig[] = [];
    const timers = new ManualTimers(new ManualClock(0));
    const watcher = new KeysWatcher(
      {
        read: (etag) => source.readIfChanged(name, etag),
        origin: location,
        apply: (k) => applied.push(k),
        timers,
        intervalMs,
        log: (level, event, fields) => logs.push([level, event, fields]),
      },
      null,
    );
    return { watcher, logs, applied, timers };
  }

  it('logs each outcome with the file it concerns; an unreadable location is "unreachable" and keeps the keys', async () => {
    const location = join(dir, 'logged-keys.json');
    const w = make(location, 1000);
    await writeFile(location, file(['a', 'b']));
    expect(await w.watcher.check()).toBe('applied');
    await writeFile(location, '{');
    expect(await w.watcher.check()).toBe('refused');
    await rm(location);
    expect(await w.watcher.check()).toBe('missing');
    expect(w.logs.map(([level, event, fields]) => [level, event, fields['keys'], fields['count']])).toEqual([
      ['info', 'keys reloaded', location, 2],
      ['error', 'new keys file refused; keeping the keys in force', location, undefined],
      ['warn', 'keys file is missing; keeping the keys in force', location, undefined],
    ]);
    expect(String(w.logs[1]![2]['error'])).toMatch(/not valid JSON/);

    // A folder where a file is expected: the source cannot answer (not ENOENT).
    await writeFile(join(dir, 'not-a-dir'), 'x');
    const u = make(join(dir, 'not-a-dir', 'keys.json'), 1000);
    expect(await u.watcher.check()).toBe('unreachable');
    expect(u.logs.map(([level, event]) => [level, event])).toEqual([['warn', 'keys file unreachable; keeping the keys in force']]);
    expect(String(u.logs[0]![2]['error'])).toMatch(/ENOTDIR/);
    expect(u.applied).toEqual([]);
  });

  it('polls every interval until stopped; interval 0 only checks on demand', async () => {
    const location = join(dir, 'polled-keys.json');
    await writeFile(location, file(['a']));
    const w = make(location, 5000);
    w.watcher.start();
    expect(w.timers.requested).toEqual([5000]);
    w.timers.fire();
    await w.timers.armed('the second poll');
    expect(w.applied).toHaveLength(1);
    expect(w.timers.requested).toEqual([5000, 5000]);
    w.watcher.stop();
    expect(w.timers.nextDue()).toBeNull();

    const z = make(location, 0);
    z.watcher.start();
    expect(z.timers.requested).toEqual([]);
    expect(await z.watcher.check()).toBe('applied');
    expect(z.timers.requested).toEqual([]);
  });

  it('a poll already under way when stopped does not arm another', async () => {
    const location = join(dir, 'stopped-keys.json');
    await writeFile(location, file(['a']));
    const w = make(location, 5000);
    w.watcher.start();
    w.timers.fire(); // the poll starts
    w.watcher.stop();
    await new Promise((r) => setTimeout(r, 50));
    expect(w.timers.nextDue()).toBeNull();
    expect(w.timers.requested).toEqual([5000]);
  });
});
