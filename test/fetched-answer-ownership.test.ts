import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { headerBlockPairs } from '../src/http/header-block.js';
import { recordIdText } from '../src/http/record-id.js';
import type { HttpRequest, HttpResponse } from '../src/http/types.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';
import { TEST_KEY, startInProcessHarness, type Harness } from './support/harness.js';
import { getRequest } from './support/in-process.js';

const PATH = '/pemi/grid_stress';

/**
 * A request naming a generation its thread does not hold is answered after that generation
 * is fetched (contract 12): an answer that comes later, so it owns its header block and
 * body (http/types.ts), although it is written by the synchronous path, into the thread's
 * reused answer, header block and output buffer. Two such requests asked together are both
 * answered when the one fetch completes, one after the other in the same turn: held side
 * by side, each keeps its own; without the copies in fetchThenAnswer the first would show
 * the second's.
 */
function rows(generation: number): PitRow[] {
  const out: PitRow[] = [];
  for (let d = 0; d < 60; d++) {
    const date = new Date(Date.UTC(2026, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);
    for (const zone of ['DE', 'FR'])
      out.push({ date, eff: date, obs: `${date}T06:00:00Z`, key: { bidding_zone: zone }, tag: `g${generation}-${zone}-${d}`, value: generation * 1000 + d });
  }
  return out;
}

/** Two pages of generation 1 of different lengths (so different counts, ETags and bodies). */
const QUERIES = ['latest=false&limit=7&generation=1', 'latest=false&bidding_zone=FR&limit=30&generation=1'];

function ask(rawQuery: string): HttpRequest {
  return getRequest(PATH, rawQuery, TEST_KEY);
}

/** What a client would read of the answer: its headers (block and pairs) and its body. */
function read(r: HttpResponse): { status: number; etag: string | undefined; xCount: string | undefined; generation: number; tags: string[] } {
  const headers = Object.fromEntries([...r.headers, ...(r.headerBlock ? headerBlockPairs(r.headerBlock) : [])]);
  const body = JSON.parse(Buffer.from(r.body).toString()) as { data: { tag: string }[]; metadata: { generation: number; record_id: string } };
  // The id the body names is the one x-request-id carries (the transport writes r.requestId).
  expect(body.metadata.record_id).toBe(recordIdText(r.requestId));
  return { status: r.status, etag: headers['etag'], xCount: headers['x-count'], generation: body.metadata.generation, tags: body.data.map((d) => d.tag) };
}

describe('answers after a generation fetch own their bytes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startInProcessHarness({
      datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows(1)), generation: 1 }],
      // Generation 2 published before the server starts: it serves 2 and holds no 1.
      prepare: async (dir) => {
        await writeGeneration(
          new LocalSource(dir),
          { productId: 'pemi', dataset: 'grid_stress' },
          buildArrowSnapshot(pitSnapshot(['bidding_zone'], rows(2))),
          2,
          '2026-11-02T00:00:00Z',
        );
      },
      server: { responseCacheBytes: 0 },
    });
  });
  afterAll(async () => h?.close());

  it('two requests answered by one fetch, held at once, keep their own ETag, counts and rows, whatever the transport does with its request objects meanwhile', async () => {
    const handler = h.handler();
    expect(read((await handler(ask('latest=false&limit=1'))) as HttpResponse).generation).toBe(2);
    // Both asked before either is read: both wait for the one fetch of generation 1.
    const requests = QUERIES.map(ask);
    const pending = requests.map((r) => handler(r));
    for (const p of pending) expect(p, 'answered after the fetch').toBeInstanceOf(Promise);
    // uWS's route refills its one request object for the next request while these wait (http/types.ts).
    for (const r of requests) Object.assign(r, { path: '/pemi/elsewhere', rawQuery: 'latest=true&limit=1', accept: 'text/csv', ifNoneMatch: '"x"' });
    const answers = await Promise.all(pending);
    // Answered after the await, each with its own id as a string: the id's bytes are the thread's, rewritten per request (record-id.ts).
    expect(answers.map((a) => typeof a.requestId)).toEqual(['string', 'string']);
    expect(answers[0]!.requestId).not.toBe(answers[1]!.requestId);
    const held = answers.map(read);
    // Each asked alone and read at once (generation 1 is held by now).
    const alone: ReturnType<typeof read>[] = [];
    for (const q of QUERIES) alone.push(read(await handler(ask(q))));

    expect(alone.map((a) => [a.status, a.generation, a.xCount, a.tags.length])).toEqual([
      [200, 1, '7', 7],
      [200, 1, '30', 30],
    ]);
    expect(alone[0]!.etag).not.toBe(alone[1]!.etag);
    expect(alone.every((a) => a.tags.every((t) => t.startsWith('g1-')))).toBe(true);
    expect(held).toEqual(alone);
  });
});
