/**
 * Contract 5 (and spec 5, 7): the bad-input table, then each status of the error table:
 * 400, 401, 403, 404, 405, 429, 503, and HEAD.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../src/time/clock.js';
import { EU_KEY, TEST_KEY, defaultKeysJson, startInProcessHarness, type Harness, type Reply } from './support/harness.js';
import { expectError, pitSnapshot, rowsOf, type PitRow } from './support/fixtures.js';

const LIMITED_KEY = 'test-key-limited';
const GLMI = '/glmi/marginality';

const ROWS: PitRow[] = [
  { key: { basin: 'atlantic' }, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 'a' },
  { key: { basin: 'pacific' }, date: '2026-04-02', eff: '2026-04-02', obs: '2026-04-02T06:00:00Z', tag: 'p' },
];

/** [query, status, code, param]: param undefined = no single parameter at fault; 'any' = not checked. */
const BAD_INPUT: Array<[string, number, string, string | undefined | 'any']> = [
  ['latest=yes', 400, 'invalid_parameter', 'latest'],
  ['latest=', 400, 'invalid_parameter', 'latest'],
  ['date_from=2026-13-01', 400, 'invalid_parameter', 'date_from'],
  ['date_from=2026-02-30', 400, 'invalid_parameter', 'date_from'],
  ['date_to=20260101', 400, 'invalid_parameter', 'date_to'],
  ['date_to=2026-1-01', 400, 'invalid_parameter', 'date_to'],
  ['date_from=2026-04-02&date_to=2026-04-01', 400, 'invalid_parameter', 'any'],
  ['limit=0', 400, 'invalid_parameter', 'limit'],
  ['limit=10001', 400, 'invalid_parameter', 'limit'],
  ['limit=abc', 400, 'invalid_parameter', 'limit'],
  ['as_of=garbage', 400, 'invalid_parameter', 'as_of'],
  ['as_of=2026-01-01T00:00:00', 400, 'invalid_parameter', 'as_of'],
  ['as_of=2026-01-01T25:00:00Z', 400, 'invalid_parameter', 'as_of'],
  ['as_of=2026-02-29', 400, 'invalid_parameter', 'as_of'],
  ['as_of=2026-01-01T00:00:00%2B1', 400, 'invalid_parameter', 'as_of'],
  ['as_of=', 400, 'invalid_parameter', 'as_of'],
  ['cursor=garbage', 400, 'invalid_cursor', 'cursor'],
  ['limit=5&limit=5', 400, 'invalid_parameter', 'limit'],
  ['as_of=2026-04-01&as_of=2026-04-02', 400, 'invalid_parameter', 'as_of'],
  ['foo=1', 400, 'unknown_parameter', 'foo'],
  // A pair without a name is no parameter the body could name (found by the fuzz test).
  ['=1', 400, 'unknown_parameter', undefined],
  ['basin=atlantic&=', 400, 'unknown_parameter', undefined],
  ['=%zz', 400, 'unknown_parameter', undefined],
  ['%3D=1', 400, 'unknown_parameter', '='],
  ['country=DE', 400, 'unknown_parameter', 'country'],
  ['basin=%zz', 400, 'invalid_parameter', 'basin'],
  ['as_of=2026-04-01%', 400, 'invalid_parameter', 'as_of'],
  ['basin=', 400, 'invalid_parameter', 'basin'],
  ['basin=middle_eastern', 400, 'invalid_parameter', 'basin'],
];

describe('contract 5: errors', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [
        { productId: 'glmi', dataset: 'marginality', spec: pitSnapshot(['basin'], ROWS) },
        {
          productId: 'gbsi_eu',
          dataset: 'system_stress',
          spec: pitSnapshot(['country'], [{ key: { country: 'DE' }, date: '2026-04-01', eff: '2026-04-01', obs: '2026-04-01T06:00:00Z', tag: 'de' }]),
        },
      ],
      keys: defaultKeysJson([{ id: 'limited', key: LIMITED_KEY, products: ['*'], rate_limit: { per_second: 1, burst: 2 } }]),
    });
  });
  afterAll(() => h.close());

  it.each(BAD_INPUT)('400 bad input: %s', async (query, status, code, param) => {
    expectError(await h.get(`${GLMI}?${query}`), status, code, param);
  });

  it('401: a missing key and an unknown key get the same answer', async () => {
    const missing = await h.get(GLMI, null);
    const unknown = await h.get(GLMI, 'not-a-key');
    const wrongCase = await h.get(GLMI, TEST_KEY.toUpperCase());
    const empty = await h.get(GLMI, null, { headers: { 'x-api-key': '' } });
    for (const r of [missing, unknown, wrongCase, empty]) expectError(r, 401, 'unauthorized', undefined);
    expect(unknown.body.error.message).toBe(missing.body.error.message);
    expect(wrongCase.body.error.message).toBe(missing.body.error.message);
  });

  it('401 is checked before 404, 405 and 503: an unauthenticated caller learns nothing about paths', async () => {
    for (const path of ['/nope/nothing', '/glmi/nope', '/', '/glmi/marginality/extra', '/gbsi_us/system_stress', `${GLMI}?limit=0`]) {
      expectError(await h.get(path, null), 401, 'unauthorized', undefined);
      expectError(await h.get(path, 'not-a-key'), 401, 'unauthorized', undefined);
    }
    expectError(await h.get(GLMI, null, { method: 'POST' }), 401, 'unauthorized', undefined);
  });

  it('403: a known key not entitled to the product', async () => {
    expectError(await h.get(GLMI, EU_KEY), 403, 'forbidden', undefined);
    expectError(await h.get('/wrsi/forecast_stress', EU_KEY), 403, 'forbidden', undefined);
    expect(rowsOf(await h.get('/gbsi_eu/system_stress', EU_KEY)).length).toBe(1);
  });

  it('404: unknown product, unknown dataset, any other path, trailing segments', async () => {
    for (const path of [
      '/nope/marginality',
      '/glmi/nope',
      '/glmi/system_stress',
      '/',
      '/glmi',
      '/glmi/',
      `${GLMI}/`,
      `${GLMI}/extra`,
      '/GLMI/marginality',
      '/favicon.ico',
      '/v1/glmi/marginality',
    ]) {
      expectError(await h.get(path), 404, 'not_found', undefined);
    }
    // A key not entitled to anything named there still gets 404 for a path that does not exist.
    expectError(await h.get('/nope/marginality', EU_KEY), 404, 'not_found', undefined);
  });

  it('405: POST, PUT, DELETE, PATCH, OPTIONS on a data path, with Allow: GET, HEAD', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const r = await h.get(GLMI, TEST_KEY, { method });
      expectError(r, 405, 'method_not_allowed', undefined);
      expect(r.headers.get('allow')).toBe('GET, HEAD');
    }
  });

  it('503: a named dataset with no snapshot', async () => {
    for (const path of ['/gbsi_us/system_stress', '/gbsi_us/backtest_summary', '/wrsi/forecast_stress']) {
      expectError(await h.get(path), 503, 'dataset_unavailable', undefined);
    }
  });

  it("HEAD answers GET's status and headers with no body", async () => {
    const pairs: Array<[string, string | null]> = [
      [GLMI, TEST_KEY],
      [`${GLMI}?limit=0`, TEST_KEY],
      [GLMI, null],
      ['/glmi/nope', TEST_KEY],
      ['/gbsi_us/system_stress', TEST_KEY],
    ];
    for (const [path, key] of pairs) {
      const get = await h.get(path, key);
      const head = await h.get(path, key, { method: 'HEAD' });
      expect(head.status, path).toBe(get.status);
      expect(head.text, path).toBe('');
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'));
      expect(head.headers.get('content-length'), path).toBe(String(Buffer.byteLength(get.text)));
      expect(head.headers.get('x-request-id'), path).toMatch(/^req_[0-9a-z]{16,}$/);
    }
  });

  it('/healthz answers 200 without a key', async () => {
    const r = await h.get('/healthz', null);
    expect(r.status).toBe(200);
  });

  it('429: a key over its rate limit, with Retry-After and RateLimit-* headers; they also come on its successful answers', async () => {
    const clock = h.clock as ManualClock;
    const rl = (r: Reply) => [r.headers.get('ratelimit-limit'), r.headers.get('ratelimit-remaining'), r.headers.get('ratelimit-reset')];
    // Bucket of 2, refilled at 1/s; the clock stands still, so the third request is over.
    const first = await h.get(GLMI, LIMITED_KEY);
    expect(first.status).toBe(200);
    expect(rl(first)).toEqual(['2', '1', '1']);
    const second = await h.get(GLMI, LIMITED_KEY);
    expect(second.status).toBe(200);
    expect(rl(second)).toEqual(['2', '0', '2']);
    const third = await h.get(GLMI, LIMITED_KEY);
    expectError(third, 429, 'rate_limited', undefined);
    expect(third.headers.get('retry-after')).toBe('1');
    expect(rl(third)).toEqual(['2', '0', '2']);
    // An unlimited key is not affected.
    expect((await h.get(GLMI)).status).toBe(200);
    // One second later one token is back.
    clock.advance(1000);
    const fourth = await h.get(GLMI, LIMITED_KEY);
    expect(fourth.status).toBe(200);
    expect(fourth.headers.get('retry-after')).toBeNull();
    expectError(await h.get(GLMI, LIMITED_KEY), 429, 'rate_limited', undefined);
  });
});
