import { PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { S3SourceError } from '../src/source/s3-errors.js';
import { ObjectSizeError, S3Source } from '../src/source/s3-source.js';
import type { S3SourceOptions } from '../src/source/s3-source.js';
import { ManualClock } from '../src/time/clock.js';
import { ManualTimers } from '../src/time/manual-timers.js';
import { activeTimers, type Timers } from '../src/time/timers.js';
import { ObjectMissingError, PreconditionFailedError } from '../src/source/snapshot-source.js';
import { patternBytes } from './support/loader-suite.js';
import { startS3rver } from './support/s3rver.js';
import type { TestS3 } from './support/s3rver.js';
import { TcpFaultProxy } from './support/tcp-fault-proxy.js';

/*
 * Network faults between the S3 source and a real S3 server (s3rver), made by a real TCP
 * proxy, met by the real SDK. Attempts are counted as connections through the proxy: the
 * source drops a connection after every failed attempt, so none is reused.
 */

/**
 * The stall time. The stall tests let it pass on injected timers; every other test's source
 * holds its watchdog's timer and never fires it (noStallTimers), so no outcome here is a
 * stall that a loaded machine set off (a real 300 ms watchdog made a slow s3rver count as a
 * failed attempt under `npm test`). Long, so that the SDK's own socket timeouts (real, a
 * multiple of it) are only a bound on a broken test, never reached by a slow one.
 */
const STALL_MS = 30_000;
/** the watchdog's timer as noStallTimers holds it */
const HELD = Symbol('held stall watchdog');
/**
 * Real timers for the retry backoff; the stall watchdog's (the only timer set at STALL_MS:
 * backoffs are capped at retryMaxMs) is held and never fires.
 */
const noStallTimers: Timers = {
  setTimeout: (fn, ms) => (ms === STALL_MS ? HELD : activeTimers.setTimeout(fn, ms)),
  clearTimeout: (handle) => {
    if (handle !== HELD) activeTimers.clearTimeout(handle);
  },
};
const BIG = patternBytes(1024 * 1024, 7);
const MANIFEST = patternBytes(256 * 1024, 9);

let s3: TestS3;
let proxy: TcpFaultProxy;
let source: S3Source;

beforeAll(async () => {
  vi.stubEnv('AWS_ACCESS_KEY_ID', 'S3RVER');
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'S3RVER');
  s3 = await startS3rver();
  proxy = await TcpFaultProxy.start(Number(new URL(s3.endpoint).port));
  for (const [key, body] of [
    ['faults/p/d/snapshots/big.arrow', BIG],
    ['faults/p/d/manifest.json', MANIFEST],
  ] as const) {
    await s3.client.send(new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }));
  }
});

afterAll(async () => {
  await proxy?.close();
  await s3?.close();
  vi.unstubAllEnvs();
});

function openThroughProxy(options: S3SourceOptions = {}): S3Source {
  return new S3Source(`s3://${s3.bucket}/faults`, {
    endpoint: proxy.endpoint,
    forcePathStyle: true,
    stallTimeoutMs: STALL_MS,
    timers: noStallTimers,
    maxAttempts: 3,
    retryBaseMs: 10,
    retryMaxMs: 40,
    ...options,
  });
}

beforeEach(async () => {
  await proxy.setMode({ kind: 'pass' });
  proxy.resetStats();
  source = openThroughProxy();
});

afterEach(() => {
  source.close();
});

async function failure(promise: Promise<unknown>): Promise<S3SourceError> {
  const e = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(S3SourceError);
  const error = e as S3SourceError;
  // Whatever went wrong, no credential reaches the message.
  expect(error.message).not.toContain('S3RVER');
  expect(error.message).not.toMatch(/Signature|Credential/);
  return error;
}

/**
 * A source whose stall watchdog and backoff run on injected timers: the test lets the
 * stall time pass once the proxy holds a connection silent, so no test waits for it. The
 * stall time is long, so the SDK's own socket timeouts (real, a multiple of it) stay out of
 * the way.
 */
function onManualTimers(options: S3SourceOptions = {}): { source: S3Source; timers: ManualTimers } {
  const timers = new ManualTimers(new ManualClock(0));
  // No jitter: whole-millisecond backoffs keep every due time exact on the manual clock.
  return { source: openThroughProxy({ ...options, timers, clock: timers.clock, random: () => 0 }), timers };
}

/**
 * Attempt by attempt: wait until the proxy holds connection n silent, let the stall time
 * pass, then fire the backoff before the next attempt (after the last one too when a retry
 * is to follow).
 */
async function stallAttempts(timers: ManualTimers, attempts: number, retryAfter: boolean): Promise<void> {
  for (let n = 1; n <= attempts; n++) {
    await proxy.whenHeld(n);
    // Only the attempt's watchdog is pending: nothing fires before the stall time has passed.
    timers.advance(STALL_MS - 1);
    expect(timers.size, `attempt ${n} aborted before its stall time`).toBe(1);
    timers.advance(1);
    if (n < attempts || retryAfter) {
      await timers.armed(`the backoff after attempt ${n}`);
      timers.fire();
    }
  }
}

describe('S3Source under network faults', () => {
  it('aborts a download that stalls mid-body and retries it to completion', async () => {
    await proxy.setMode({ kind: 'stall', afterBytes: 64 * 1024, connections: 1 });
    const { source: s, timers } = onManualTimers();
    try {
      const reading = s.readObject('p/d/snapshots/big.arrow', BIG.byteLength);
      await stallAttempts(timers, 1, true);
      const bytes = await reading;
      expect(Buffer.from(bytes).equals(Buffer.from(BIG))).toBe(true);
      expect(proxy.stats.connections).toBe(2);
    } finally {
      s.close();
    }
  });

  it('a streamed read of a large object is ranged GETs, a few at once, each byte handed over once and in order', async () => {
    const s = openThroughProxy({ rangeBytes: 128 * 1024, rangeParallel: 3 });
    try {
      const stretches: Uint8Array[] = [];
      const bytes = await s.readObjectStreaming('p/d/snapshots/big.arrow', BIG.byteLength, (b) => stretches.push(b.slice()));
      expect(Buffer.from(bytes).equals(Buffer.from(BIG))).toBe(true);
      expect(Buffer.concat(stretches).equals(Buffer.from(BIG))).toBe(true);
      // Eight ranges, three at once: more than one connection, never more than three.
      expect(proxy.stats.connections).toBeGreaterThan(1);
      expect(proxy.stats.connections).toBeLessThanOrEqual(3);
    } finally {
      s.close();
    }
  });

  it('a ranged read that stalls mid-body is retried from where its bytes stopped: no byte handed over twice', async () => {
    await proxy.setMode({ kind: 'stall', afterBytes: 200 * 1024, connections: 1 });
    // The stall watchdog on real timers: a stalled range is aborted after 300 ms of silence.
    const s = openThroughProxy({ rangeBytes: 256 * 1024, rangeParallel: 2, stallTimeoutMs: 300, timers: activeTimers });
    try {
      let handed = 0;
      const seen: Uint8Array[] = [];
      const bytes = await s.readObjectStreaming('p/d/snapshots/big.arrow', BIG.byteLength, (b) => {
        handed += b.byteLength;
        seen.push(b.slice());
      });
      expect(Buffer.from(bytes).equals(Buffer.from(BIG))).toBe(true);
      expect(handed).toBe(BIG.byteLength);
      expect(Buffer.concat(seen).equals(Buffer.from(BIG))).toBe(true);
      // the stalled connection was dropped: its range went on over another one
      expect(proxy.stats.connections).toBeGreaterThanOrEqual(2);
    } finally {
      s.close();
    }
  });

  it('a streamed read of one GET (an object up to rangeBytes) resumes a stalled body where it stopped', async () => {
    await proxy.setMode({ kind: 'stall', afterBytes: 300 * 1024, connections: 1 });
    const { source: s, timers } = onManualTimers();
    try {
      let handed = 0;
      const seen: Uint8Array[] = [];
      const reading = s.readObjectStreaming('p/d/snapshots/big.arrow', undefined, (b) => {
        handed += b.byteLength;
        seen.push(b.slice());
      });
      await stallAttempts(timers, 1, true);
      const bytes = await reading;
      expect(Buffer.from(bytes).equals(Buffer.from(BIG))).toBe(true);
      expect(handed).toBe(BIG.byteLength);
      expect(Buffer.concat(seen).equals(Buffer.from(BIG))).toBe(true);
      expect(proxy.stats.connections).toBe(2);
    } finally {
      s.close();
    }
  });

  it('an object of another size than its manifest says is refused as a mismatch, not retried as an outage', async () => {
    const s = openThroughProxy({ rangeBytes: 256 * 1024 });
    try {
      const e = await s.readObjectStreaming('p/d/snapshots/big.arrow', BIG.byteLength - 1, () => {}).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(ObjectSizeError);
      expect((e as ObjectSizeError).code).toBe('checksum_mismatch');
      expect((e as Error).message).toMatch(/big\.arrow is 1048576 bytes, its manifest says 1048575/);
    } finally {
      s.close();
    }
  });

  it('gives up on an endless stall after maxAttempts, naming the operation and the object', async () => {
    await proxy.setMode({ kind: 'stall', afterBytes: 64 * 1024 });
    const { source: s, timers } = onManualTimers();
    try {
      const reading = failure(s.readObject('p/d/snapshots/big.arrow'));
      await stallAttempts(timers, 3, false);
      const error = await reading;
      expect(error.message).toMatch(/^S3 GetObject s3:\/\/snapshots\/faults\/p\/d\/snapshots\/big\.arrow failed after 3 attempts: stalled/);
      expect(error.attempts).toBe(3);
      expect(proxy.stats.connections).toBe(3);
    } finally {
      s.close();
    }
  });

  it('treats a server that never answers the request like a stall', async () => {
    await proxy.setMode({ kind: 'stall', afterBytes: 0 });
    const { source: s, timers } = onManualTimers();
    try {
      const reading = failure(s.readIfChanged('p/d/manifest.json', null));
      await stallAttempts(timers, 3, false);
      const error = await reading;
      expect(error.message).toMatch(/^S3 GetObject s3:\/\/snapshots\/faults\/p\/d\/manifest\.json failed after 3 attempts: /);
      expect(error.reason).toBe(`stalled: no bytes received for ${STALL_MS} ms, request aborted`);
      expect(proxy.stats.connections).toBe(3);
    } finally {
      s.close();
    }
  });

  it('retries a connection reset mid-body', async () => {
    await proxy.setMode({ kind: 'cut', afterBytes: 100 * 1024, connections: 2 });
    const bytes = await source.readObject('p/d/snapshots/big.arrow');
    expect(Buffer.from(bytes).equals(Buffer.from(BIG))).toBe(true);
    expect(proxy.stats.connections).toBe(3);
  });

  it('a keep-alive connection the store closed while idle, reused for the next request, is retried on a new one', async () => {
    await source.readObject('p/d/manifest.json');
    expect(proxy.stats.connections).toBe(1);
    // The pooled connection is closed as the next request goes out on it.
    await proxy.setMode({ kind: 'dropReused', connections: 1 });
    const bytes = await source.readObject('p/d/manifest.json');
    expect(Buffer.from(bytes).equals(Buffer.from(MANIFEST))).toBe(true);
    expect(proxy.stats.droppedReused).toBe(1);
    expect(proxy.stats.connections).toBe(2);
  });

  it('with one attempt, the same closed connection fails the read: the retry above is what carries it', async () => {
    const once = openThroughProxy({ maxAttempts: 1 });
    try {
      await once.readObject('p/d/manifest.json');
      await proxy.setMode({ kind: 'dropReused', connections: 1 });
      const error = await failure(once.readObject('p/d/manifest.json'));
      expect(error.message).toMatch(/^S3 GetObject s3:\/\/snapshots\/faults\/p\/d\/manifest\.json failed: .*ECONNRESET: socket hang up$/);
      expect(proxy.stats.droppedReused).toBe(1);
    } finally {
      once.close();
    }
  });

  it('fails with the operation named when every request gets a 500', async () => {
    await proxy.setMode({ kind: 'http500' });
    const read = await failure(source.readObject('p/d/snapshots/big.arrow'));
    expect(read.message).toBe(
      'S3 GetObject s3://snapshots/faults/p/d/snapshots/big.arrow failed after 3 attempts: InternalError, HTTP 500: Canned InternalError from the fault proxy.',
    );
    expect(read.httpStatus).toBe(500);
    expect(proxy.stats.cannedErrors).toBe(3);

    const list = await failure(source.listDatasets());
    expect(list.message).toMatch(/^S3 ListObjectsV2 s3:\/\/snapshots\/faults\/ failed after 3 attempts: InternalError, HTTP 500/);

    const write = await failure(source.writeObject('p/d/new.json', new TextEncoder().encode('{}')));
    expect(write.message).toMatch(/^S3 PutObject s3:\/\/snapshots\/faults\/p\/d\/new\.json failed after 3 attempts: InternalError, HTTP 500/);
  });

  it('fails with an error naming the operation when the connection is refused', async () => {
    await proxy.setMode({ kind: 'refuse' });
    const error = await failure(source.readIfChanged('p/d/manifest.json', null));
    expect(error.message).toMatch(/^S3 GetObject s3:\/\/snapshots\/faults\/p\/d\/manifest\.json failed after 3 attempts: .*ECONNREFUSED/);
    expect(error.code).toBe('ECONNREFUSED');
    // The store comes back: the same source reads again.
    await proxy.setMode({ kind: 'pass' });
    expect((await source.readIfChanged('p/d/manifest.json', null)).status).toBe('ok');
  });

  it('backs off exponentially between attempts, capped at retryMaxMs', async () => {
    // Real timers, recorded: every wait that is not the watchdog's is a backoff.
    const waits: number[] = [];
    const timers: Timers = {
      ...noStallTimers,
      setTimeout: (fn, ms) => {
        if (ms !== STALL_MS) waits.push(ms);
        return noStallTimers.setTimeout(fn, ms);
      },
    };
    const patient = openThroughProxy({ maxAttempts: 5, retryBaseMs: 10, retryMaxMs: 40, timers, random: () => 0 });
    try {
      await proxy.setMode({ kind: 'refuse' });
      const error = await failure(patient.readIfChanged('p/d/manifest.json', null));
      expect(error.attempts).toBe(5);
      // Half of each ceiling is fixed, half jitter (here 0): ceilings 10, 20, 40, 40.
      expect(waits).toEqual([5, 10, 20, 20]);
    } finally {
      patient.close();
    }
  });

  it('does not retry an answer: a missing object fails at once', async () => {
    const error = await source.readObject('p/d/snapshots/absent.arrow').then(
      () => expect.unreachable('the read should fail'),
      (err: unknown) => err as Error,
    );
    expect(error).toBeInstanceOf(ObjectMissingError);
    expect(error.message).toBe('object p/d/snapshots/absent.arrow is missing');
    expect(proxy.stats.connections).toBe(1);
  });

  it('costs no body bytes when the manifest is unchanged (304)', async () => {
    const first = await source.readIfChanged('p/d/manifest.json', null);
    if (first.status !== 'ok') throw new Error(`expected ok, got ${first.status}`);
    expect(proxy.stats.bytesToClient).toBeGreaterThan(MANIFEST.byteLength);

    proxy.resetStats();
    expect(await source.readIfChanged('p/d/manifest.json', first.etag)).toEqual({ status: 'unchanged' });
    // Headers only: far less than the 256 KiB body.
    expect(proxy.stats.bytesToClient).toBeGreaterThan(0);
    expect(proxy.stats.bytesToClient).toBeLessThan(1024);
  });

  it("maps a store's 412 on a conditional put ('enforced' mode) to PreconditionFailedError", async () => {
    const enforcing = openThroughProxy({ conditionalWrites: 'enforced' });
    try {
      await proxy.setMode({ kind: 'httpError', status: 412, code: 'PreconditionFailed' });
      const write = enforcing.writeObject('p/d/manifest.json', new TextEncoder().encode('{}'), { ifNoneMatch: '*' });
      await expect(write).rejects.toBeInstanceOf(PreconditionFailedError);
      await expect(write).rejects.toThrow(/^S3 PutObject s3:\/\/snapshots\/faults\/p\/d\/manifest\.json: changed by someone else/);
      await expect(write).rejects.toMatchObject({ path: 'p/d/manifest.json' });
      // An answer, not a fault: no retry.
      expect(proxy.stats.cannedErrors).toBe(1);
    } finally {
      enforcing.close();
    }
  });
});
