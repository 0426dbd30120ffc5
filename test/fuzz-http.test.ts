/**
 * Generated bad input against a real uWS server on the demo data (contract 5): every
 * endpoint of its OpenAPI document with its parameters, the other endpoints' and made-up
 * ones, adversarial values (unicode, huge numbers, broken percent-encoding, repeated and
 * empty parameters), headers, paths, real cursors mutated byte by byte, and bodies (asof_join's
 * events as CSV, JSON or Arrow, plain, gzipped or broken). Every
 * answer comes whole within the bound, is never a 500, is the contract's error body with a
 * code of its table and that code's status, comes again the same when asked again, and a
 * valid request right after is answered with the same rows. A bounded number of cases
 * here; `npm run bench:fuzz` runs many more (bench/RESULTS.md).
 */
import { createServer, type Server } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAnswer } from './support/fuzz/oracle.js';
import { fuzzCaseArb, mutate } from './support/fuzz/requests.js';
import { caseRunner } from './support/fuzz/run-case.js';
import { startFuzzServer, type FuzzServer } from './support/fuzz/world.js';
import { rawRequest, type RawHttpError, type RawReply } from './support/raw-http.js';

/** Cases per run: about 8 s on an idle 2-core box (three requests each). */
const CASES = 300;
/** A hang, not a slow answer: far above any answer of the demo data on a loaded box. */
const TIMEOUT_MS = 20_000;

let s: FuzzServer;

beforeAll(async () => {
  s = await startFuzzServer();
}, 180_000);
afterAll(async () => {
  await s?.close();
});

describe('generated bad input', () => {
  it(`${CASES} generated requests: never a 500 or a hang, always the contract's error body with a stable code, valid requests answered between`, async () => {
    const runner = await caseRunner(s.port, s.world, TIMEOUT_MS);
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(fuzzCaseArb(s.world), async (c) => {
        const o = await runner.run(c);
        const key = `${c.kind} ${o.status} ${o.code}`;
        seen.set(key, (seen.get(key) ?? 0) + 1);
      }),
      { numRuns: CASES },
    );
    expect(s.errors, 'no request failed inside the server').toEqual([]);
    // The cases reached every layer: answers with rows, each kind of 4xx, and cursors refused as such.
    const total = (pred: (k: string) => boolean): number => [...seen].filter(([k]) => pred(k)).reduce((a, [, n]) => a + n, 0);
    expect(
      total((k) => k.startsWith('data 200')),
      [...seen].join('; '),
    ).toBeGreaterThan(0);
    for (const code of ['invalid_parameter', 'unknown_parameter', 'unauthorized', 'not_found', 'method_not_allowed']) {
      expect(
        total((k) => k.endsWith(` ${code}`)),
        code,
      ).toBeGreaterThan(0);
    }
    expect(total((k) => k === 'cursor 400 invalid_cursor')).toBeGreaterThan(0);
    expect(total((k) => k === 'asof_join 400 invalid_body')).toBeGreaterThan(0);
  }, 300_000);

  it('a mutated cursor that decodes to the same bytes is still the cursor; any other change of its bytes is refused as invalid_cursor', async () => {
    const runner = await caseRunner(s.port, s.world, TIMEOUT_MS);
    const sample = s.world.cursors[0]!;
    const query = sample.query.map(([n, v]) => `${n}=${v}`).join('&');
    const key: [string, string] = ['x-api-key', s.world.keys.main];
    // Every single-character replacement at every position, and every truncation.
    const tokens = new Set<string>();
    for (let i = 0; i < sample.cursor.length; i++) {
      tokens.add(mutate(sample.cursor, 'replace', i, sample.cursor[i] === 'A' ? 'B' : 'A'));
      tokens.add(mutate(sample.cursor, 'truncate', i, ''));
      tokens.add(mutate(sample.cursor, 'flip-bit', i, ''));
    }
    for (const token of tokens) {
      await runner.run({
        kind: 'cursor',
        request: { method: 'GET', target: `${sample.path}?${query}&cursor=${token}`, headers: [key] },
        cursor: { original: sample.cursor, sent: token },
      });
    }
  }, 300_000);
});

describe('the fuzz harness itself', () => {
  it('reports a server that never answers as a hang, and one that closes as closed', async () => {
    const silent: Server = createServer(() => {});
    const closing: Server = createServer((socket) => socket.destroy());
    const listen = (srv: Server): Promise<number> => new Promise((done) => srv.listen(0, '127.0.0.1', () => done((srv.address() as { port: number }).port)));
    try {
      const request = { method: 'GET', target: '/', headers: [] };
      await expect(rawRequest(await listen(silent), request, 300)).rejects.toMatchObject({ kind: 'timeout' } satisfies Partial<RawHttpError>);
      await expect(rawRequest(await listen(closing), request, 5_000)).rejects.toMatchObject({ kind: 'closed' });
    } finally {
      silent.close();
      closing.close();
    }
  });

  it('refuses a 500, an error body off the contract, and a code under another status', () => {
    const reply = (status: number, body: object, headers: Record<string, string> = {}): RawReply => ({
      status,
      headers: new Map(Object.entries({ 'content-type': 'application/json', 'x-request-id': 'req_0123456789abcdefgh', ...headers }).map(([k, v]) => [k, [v]])),
      body: Buffer.from(JSON.stringify(body)),
      ms: 0,
    });
    const error = (status: number, code: string, extra: object = {}): object => ({
      error: { status, code, message: 'm', ...extra },
      record_id: 'req_0123456789abcdefgh',
    });
    expect(checkAnswer(reply(400, error(400, 'invalid_parameter', { param: 'limit' })), 'GET')).toEqual({ status: 400, code: 'invalid_parameter' });
    expect(() => checkAnswer(reply(500, error(500, 'internal_error')), 'GET')).toThrow(/^500/);
    expect(() => checkAnswer(reply(400, error(400, 'not_found')), 'GET')).toThrow(/not a 400 code/);
    expect(() => checkAnswer(reply(404, error(400, 'not_found')), 'GET')).toThrow(/body status 400 under HTTP 404/);
    expect(() => checkAnswer(reply(400, { ...error(400, 'invalid_parameter'), extra: 1 }), 'GET')).toThrow(/error body has extra/);
    expect(() => checkAnswer(reply(400, error(400, 'invalid_parameter', { param: '' })), 'GET')).toThrow(/param is not a name/);
    expect(() => checkAnswer(reply(400, error(400, 'invalid_parameter'), { 'x-request-id': 'req_00000000000000000000' }), 'GET')).toThrow(
      /differs from x-request-id/,
    );
    expect(() => checkAnswer(reply(429, error(429, 'rate_limited')), 'GET')).toThrow(/without Retry-After/);
    expect(() => checkAnswer(reply(405, error(405, 'method_not_allowed')), 'GET')).toThrow(/405 without Allow/);
  });
});
