/**
 * Failed authentications throttled per client address over a real uWS server (issue 14):
 * one loopback address (127.0.0.2) guessing keys gets 429 with the contract's body,
 * Retry-After and RateLimit headers after the limit, for every request including a valid
 * key (refused before its key is hashed), while a valid key from another address
 * (127.0.0.1) keeps getting 200. A forged X-Forwarded-For from an untrusted peer changes
 * nothing; the window's end lets the address in again. With two serving threads the limit is
 * the same: the failures of one address count together whichever thread answered them.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../src/time/clock.js';
import { pitSnapshot } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, startHarness, type Harness } from './support/harness.js';

const T0 = Date.UTC(2026, 10, 20, 12, 0, 0);
const PATH = '/pemi/grid_stress';
const LIMIT = 5;

interface Got {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: { error?: { status: number; code: string; message: string } };
}

/** GET from a chosen local address (loopback aliases need no set-up on Linux). */
function getFrom(url: string, localAddress: string, key: string | null, extra: Record<string, string> = {}): Promise<Got> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...extra };
    if (key !== null) headers['x-api-key'] = key;
    // A fresh connection each time (agent: false), so that with two serving threads the kernel picks one per request.
    const req = http.get(`${url}${PATH}?latest=true`, { localAddress, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
  });
}

const DATASETS = [
  {
    productId: 'pemi',
    dataset: 'grid_stress',
    spec: pitSnapshot(['bidding_zone'], [{ key: { bidding_zone: 'DE' }, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 'g1' }]),
  },
];

/** The serving thread that answered (the first 12 characters of its record ids are the thread's). */
const threadOf = (g: Got): string => String(g.headers['x-request-id']).slice(0, 12);

describe('failed-authentication throttle, by socket peer', () => {
  let h: Harness;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    h = await startHarness({
      clock,
      datasets: DATASETS,
      server: { authFailLimit: { count: LIMIT, windowMs: 60_000 }, trustedProxies: '' },
    });
  });
  afterAll(() => h.close());

  it('the guessing address gets 429 after the limit, whatever key it sends; the other address keeps its 200s', async () => {
    for (let i = 0; i < LIMIT; i++) {
      expect((await getFrom(h.url, '127.0.0.2', `wrong-${i}`)).status).toBe(401);
      expect((await getFrom(h.url, '127.0.0.1', TEST_KEY)).status).toBe(200);
    }
    const refused = await getFrom(h.url, '127.0.0.2', 'wrong-again');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(refused.body.error!.message).toMatch(/too many failed authentications from this address; retry after 60 s/);
    expect(refused.headers['retry-after']).toBe('60');
    expect(refused.headers['ratelimit-limit']).toBe(String(LIMIT));
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['ratelimit-reset']).toBe('60');
    // A valid key from the throttled address is refused too: its key is never looked at.
    expect((await getFrom(h.url, '127.0.0.2', TEST_KEY)).status).toBe(429);
    expect((await getFrom(h.url, '127.0.0.2', null)).status).toBe(429);
    // A forged X-Forwarded-For from an untrusted peer changes nothing.
    expect((await getFrom(h.url, '127.0.0.2', 'wrong', { 'x-forwarded-for': '198.51.100.7' })).status).toBe(429);
    // The other address: untouched; public endpoints stay open to everyone.
    expect((await getFrom(h.url, '127.0.0.1', TEST_KEY)).status).toBe(200);
    const health = await new Promise<number>((resolve) =>
      http.get(`${h.url}/healthz`, { localAddress: '127.0.0.2', agent: false }, (r) => {
        r.resume();
        resolve(r.statusCode ?? 0);
      }),
    );
    expect(health).toBe(200);
    // Counted in the metrics, without any address label.
    const metrics = await new Promise<string>((resolve) =>
      http.get(`${h.url}/metrics`, { headers: { 'x-api-key': ADMIN_KEY }, agent: false }, (r) => {
        let s = '';
        r.on('data', (c: Buffer) => (s += c.toString()));
        r.on('end', () => resolve(s));
      }),
    );
    expect(metrics).toMatch(/^pitcache_auth_throttled_total 4$/m);
    // The window ends: the address may try again.
    clock.advance(60_000);
    expect((await getFrom(h.url, '127.0.0.2', TEST_KEY)).status).toBe(200);
  });
});

describe('failed-authentication throttle, two serving threads (--workers 2)', () => {
  let h: Harness;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    h = await startHarness({
      clock,
      datasets: DATASETS,
      server: { workers: 2, build: 'worker', authFailLimit: { count: LIMIT, windowMs: 60_000 }, trustedProxies: '' },
    });
  });
  afterAll(() => h?.close());

  it('one address gets 429 after the limit counted over both threads; the other address gets 200 from both', async () => {
    // Failures from 127.0.0.2 until LIMIT have been answered; each thread alone would allow LIMIT.
    const failures: Got[] = [];
    while (failures.length < LIMIT) {
      const g = await getFrom(h.url, '127.0.0.2', `wrong-${failures.length}`);
      expect(g.status).toBe(401);
      failures.push(g);
    }
    // Then every request from it is refused, on whichever thread: ask until both threads have refused it.
    const refused: Got[] = [];
    while (new Set(refused.map(threadOf)).size < 2) {
      expect(refused.length).toBeLessThan(200);
      const g = await getFrom(h.url, '127.0.0.2', refused.length % 2 === 0 ? 'wrong-again' : TEST_KEY);
      expect(g.status).toBe(429);
      expect(g.body.error).toMatchObject({ status: 429, code: 'rate_limited' });
      expect(g.headers['retry-after']).toBe('60');
      refused.push(g);
    }
    // 127.0.0.1 with a good key is untouched on both threads.
    const other: Got[] = [];
    while (new Set(other.map(threadOf)).size < 2) {
      expect(other.length).toBeLessThan(200);
      const g = await getFrom(h.url, '127.0.0.1', TEST_KEY);
      expect(g.status).toBe(200);
      other.push(g);
    }
    // The window ends on the shared clock: both threads let 127.0.0.2 in again.
    clock.advance(60_000);
    const after: Got[] = [];
    while (new Set(after.map(threadOf)).size < 2) {
      expect(after.length).toBeLessThan(200);
      const g = await getFrom(h.url, '127.0.0.2', TEST_KEY);
      expect(g.status).toBe(200);
      after.push(g);
    }
  });
});
