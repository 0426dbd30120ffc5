/**
 * Failed authentications throttled per client address over a real uWS server (issue 14):
 * one loopback address (127.0.0.2) guessing keys gets 429 with the contract's body,
 * Retry-After and RateLimit headers after the limit, for every request including a valid
 * key (refused before its key is hashed), while a valid key from another address
 * (127.0.0.1) keeps getting 200. A forged X-Forwarded-For from an untrusted peer changes
 * nothing; the window's end lets the address in again.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TrustedProxies } from '../src/auth/client-address.js';
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
    const req = http.get(`${url}${PATH}?latest=true`, { localAddress, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
  });
}

describe('failed-authentication throttle, by socket peer', () => {
  let h: Harness;
  const clock = new ManualClock(T0);
  beforeAll(async () => {
    h = await startHarness({
      clock,
      datasets: [
        {
          productId: 'pemi',
          dataset: 'grid_stress',
          spec: pitSnapshot(['bidding_zone'], [{ key: { bidding_zone: 'DE' }, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 'g1' }]),
        },
      ],
      server: { authFailLimit: { count: LIMIT, windowMs: 60_000 }, trustedProxies: TrustedProxies.none },
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
