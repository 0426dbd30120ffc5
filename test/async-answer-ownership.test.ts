import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { headerBlockPairs } from '../src/http/header-block.js';
import { AccessLog } from '../src/log/access-log.js';
import { recordIdText } from '../src/http/record-id.js';
import type { HttpRequest, HttpResponse } from '../src/http/types.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { TEST_KEY, startInProcessHarness, type Harness } from './support/harness.js';
import { getRequest } from './support/in-process.js';

const PATH = '/pemi/grid_stress';

/**
 * A synchronous answer's header block and body may be views into buffers the serving thread
 * reuses: the transport writes them before the next request runs. An answer that comes later
 * (a body gzipped on the thread pool) is owned (http/types.ts): a caller may hold it while
 * other answers are written. Held side by side, two such answers keep their own headers and
 * bodies; without the copies (ownedBlock, the owned body) the first would show the second's.
 */
const rows: PitRow[] = [];
for (let d = 0; d < 2000; d++) {
  const date = new Date(Date.UTC(2020, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);
  for (const zone of ['DE', 'FR', 'NL'])
    rows.push({ date, eff: date, obs: `${date}T06:00:00Z`, key: { bidding_zone: zone }, tag: `${zone}-${d}`, value: d / 4 });
}

/** Whole-history pages of 5,000 and 6,000 rows: over 256 KB of JSON, so gzipped off the serving thread. */
const QUERIES = ['latest=false&limit=5000', 'latest=false&limit=6000'];

function ask(rawQuery: string): HttpRequest {
  return getRequest(PATH, rawQuery, TEST_KEY, 'gzip');
}

/** What a client would read of the answer: its headers (block and pairs) and its decoded body. */
function read(r: HttpResponse): { headers: Record<string, string>; count: number; rows: number } {
  const headers = Object.fromEntries([...r.headers, ...(r.headerBlock ? headerBlockPairs(r.headerBlock) : [])]);
  const body = JSON.parse(zlib.gunzipSync(r.body).toString()) as { count: number; data: unknown[]; metadata: { record_id: string } };
  // The body names the request it answers (its suffix is written after the await), as a
  // string of its own: the id's bytes are the thread's, rewritten by the next request.
  expect(typeof r.requestId).toBe('string');
  expect(body.metadata.record_id).toBe(r.requestId);
  return { headers, count: body.count, rows: body.data.length };
}

describe('answers that come later own their bytes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows) }],
      // No response cache: each ask is rendered and compressed again, off the thread.
      server: { responseCacheBytes: 0 },
    });
  });
  afterAll(async () => h?.close());

  it('two gzip answers held at once keep their own ETag, counts and rows', async () => {
    const handler = h.handler();
    const alone = [];
    for (const q of QUERIES) {
      const out = handler(ask(q));
      expect(out, 'compressed off the serving thread').toBeInstanceOf(Promise);
      alone.push(read(await out));
    }
    expect(alone[0]!.headers['etag']).not.toBe(alone[1]!.headers['etag']);
    expect(alone.map((a) => [a.count, a.rows])).toEqual([
      [5000, 5000],
      [6000, 6000],
    ]);

    // Both asked before either is read: the second is written while the first is held.
    const held = await Promise.all(QUERIES.map((q) => handler(ask(q))));
    const both = held.map(read);
    for (const [i, a] of both.entries()) {
      expect(a.headers['content-encoding'], QUERIES[i]).toBe('gzip');
      expect(a.headers['etag'], QUERIES[i]).toBe(alone[i]!.headers['etag']);
      expect(a.headers['x-count'], QUERIES[i]).toBe(String(alone[i]!.count));
      expect([a.count, a.rows], QUERIES[i]).toEqual([alone[i]!.count, alone[i]!.rows]);
    }
  });
});

describe('answers that come later read the request only before they await', () => {
  let h: Harness;
  const logged: string[] = [];
  const accessLog = new AccessLog({ sink: { write: (chunk: string) => logged.push(chunk) } });
  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows) }],
      server: { responseCacheBytes: 0, accessLog: true, accessLogTo: accessLog },
    });
  });
  afterAll(async () => h?.close());

  it('the transport refilling its request object for the next request changes nothing of the pending answer', async () => {
    const handler = h.handler();
    // Page 1 of 5,000 rows: its Link names the request's own path and query, written after the await.
    const expected = read(await handler(ask(QUERIES[0]!)));
    expect(expected.headers['link']).toContain('limit=5000');
    const req = ask(QUERIES[0]!);
    const pending = handler(req);
    expect(pending).toBeInstanceOf(Promise);
    // What uWS's route does for its next request: the same object, other values.
    Object.assign(req, { path: '/pemi/elsewhere', rawQuery: 'latest=true&limit=7', acceptEncoding: '', accept: 'text/csv', ifNoneMatch: '"x"' });
    const answer = await pending;
    const got = read(answer);
    expect(got.headers['link']).toBe(expected.headers['link']);
    // The access log's line, written after the await, names the request as it was.
    accessLog.flush();
    const line = logged
      .join('')
      .split('\n')
      .find((l) => l.includes(recordIdText(answer.requestId)));
    expect(line).toContain('"path":"/pemi/grid_stress"');
    expect(line).toContain('"method":"GET"');
    expect(got.headers['etag']).toBe(expected.headers['etag']);
    expect(got.headers['content-encoding']).toBe('gzip');
    expect([got.count, got.rows]).toEqual([expected.count, expected.rows]);
  });
});
