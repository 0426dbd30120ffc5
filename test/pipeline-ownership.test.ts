/**
 * The one helper that copies a request's borrowed state before an await (pipeline/
 * ownership.ts): every part it hands back stays as it was when the thread's scratch it came
 * from is refilled by the next request: the transport's request object, the record id's
 * bytes, the request key, the stamp and the page's figures (their instants included), and
 * an answer's header block and body.
 */
import { describe, expect, it } from 'vitest';
import { RequestKey } from '../src/cache/request-key.js';
import type { PageMeta, RequestStamp } from '../src/format/resolved-page.js';
import type { HttpRequest } from '../src/http/types.js';
import type { DataAnswer } from '../src/pipeline/data-answer.js';
import { ownAcrossAwait, ownAnswer } from '../src/pipeline/ownership.js';
import { InstantMicros } from '../src/format/resolved-page.js';
import type { Mutable } from '../src/mutable.js';

function request(path: string): Mutable<HttpRequest> {
  return {
    method: 'GET',
    path,
    rawQuery: 'as_of=2026-01-01',
    apiKey: 'k',
    accept: '*/*',
    acceptEncoding: 'gzip',
    ifNoneMatch: '',
    client: { peer: () => '127.0.0.1', forwardedFor: () => '' },
  };
}

function meta(asOf: number): Mutable<PageMeta> & { extensionValues: ExtensionValues } {
  return {
    productId: 'pemi',
    count: 3,
    totalCount: 9,
    nextCursor: 'C1',
    generation: 4,
    dataLatestDate: 20_000,
    maxObservedUs: 1,
    asOfUs: asOf,
    floorApplied: false,
    extensionKeys: ['generation', 'as_of'],
    extensionValues: [4, new InstantMicros(asOf)],
  };
}
type ExtensionValues = [number, InstantMicros];

const parts = (canonical: string, generation: number) => ({
  dataset: 'pemi/grid_stress',
  generation,
  canonical,
  format: 'json',
  columns: '*',
  encoding: null,
  cursor: null,
});

describe('ownAcrossAwait: the copies a request needs past an await', () => {
  it('keeps every part as it was when the scratch it came from is refilled', () => {
    const req = request('/pemi/grid_stress');
    const idBytes = new Uint8Array(Buffer.from('req_aaaaaaaaaaaaaaaaaa', 'latin1'));
    const key = new RequestKey().fill(parts('q1', 4));
    const stamp: Mutable<RequestStamp> = { retrievedAtUs: 10, recordId: idBytes };
    const m = meta(500);

    const own = ownAcrossAwait({ req, recordId: idBytes, key, stamp, meta: m });

    // The next request refills all of it.
    req.path = '/glmi/marginality';
    req.rawQuery = 'latest=false';
    idBytes.set(Buffer.from('req_bbbbbbbbbbbbbbbbbb', 'latin1'));
    key.fill(parts('q2', 5));
    stamp.retrievedAtUs = 20;
    m.count = 1;
    m.extensionValues[1].us = 999;

    expect(own.req.path).toBe('/pemi/grid_stress');
    expect(own.req.rawQuery).toBe('as_of=2026-01-01');
    expect(own.req.client).toBeUndefined(); // it lives on the transport's stack
    expect(own.recordId).toBe('req_aaaaaaaaaaaaaaaaaa');
    expect(own.key!.canonical).toBe('q1');
    expect(own.key!.generation).toBe(4);
    expect(own.key!.matches(new RequestKey().fill(parts('q1', 4)))).toBe(true);
    expect(own.stamp).toEqual({ retrievedAtUs: 10, recordId: 'req_aaaaaaaaaaaaaaaaaa' });
    expect(own.meta!.count).toBe(3);
    expect((own.meta!.extensionValues[1] as InstantMicros).us).toBe(500);
  });

  it('copies only what it is given', () => {
    const own = ownAcrossAwait({ req: request('/x'), recordId: 'req_s', key: null, stamp: null, meta: null });
    expect(own).toMatchObject({ recordId: 'req_s', key: null, stamp: null, meta: null });
    expect(own.req.path).toBe('/x');
  });
});

describe('ownAnswer: an answer given at once, made its own', () => {
  it('holds its header block and body apart from the buffers they were views of', () => {
    const rest = new Uint8Array(Buffer.from('etag: W/"a"\r\n'));
    const body = new Uint8Array(Buffer.from('{"count":1}'));
    const a: DataAnswer = { status: 200, headerBlock: { first: 'vary', rest }, contentType: 'application/json', body, rows: 1, format: 'json' };
    const own = ownAnswer(a);
    rest.fill(0x78);
    body.fill(0x78);
    expect(Buffer.from(own.headerBlock.rest).toString()).toBe('etag: W/"a"\r\n');
    expect(Buffer.from(own.body).toString()).toBe('{"count":1}');
    expect(own).toMatchObject({ status: 200, contentType: 'application/json', rows: 1, format: 'json' });
  });
});
