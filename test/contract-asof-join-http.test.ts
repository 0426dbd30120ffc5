/**
 * Contract 15 over HTTP, what the endpoint itself decides (pipeline/join-endpoint.ts): the
 * body types it reads (parameters and case in Content-Type, the Arrow file form), the
 * Content-Encodings it undoes (gzip, x-gzip, identity, none) and the answer's compression
 * (contract 9: gzip or br when asked and the answer is large enough, plain otherwise; Vary).
 * Requests go through node:http, which does not undo a Content-Encoding, so the bytes on the
 * wire are checked as sent, against the same answer asked plain.
 */
import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { Table, TimestampMillisecond, Utf8, tableFromIPC, tableToIPC, vectorFromArray } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, type Harness } from './support/harness.js';
import { JOIN, startJoinHarness } from './support/asof-join-harness.js';

interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Buffer;
}

describe('contract 15: asof_join body types, encodings and compression over HTTP', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startJoinHarness();
  });
  afterAll(() => h.close());

  /** A POST to the join with exactly these headers; the answer's bytes as they came. */
  function post(body: Uint8Array | string, headers: Record<string, string>, query = 'columns=tag'): Promise<Raw> {
    const url = new URL(`${JOIN}?${query}`, h.url);
    return new Promise((resolve, reject) => {
      const req = httpRequest(url, { method: 'POST', headers: { 'x-api-key': TEST_KEY, ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  const json = (r: Raw): { data: Array<Record<string, unknown>> } => JSON.parse(r.body.toString('utf8')) as { data: Array<Record<string, unknown>> };
  /** many events: an answer well past the size under which answers go out plain */
  const manyEvents = `at,country\n${Array.from({ length: 200 }, (_, i) => `2026-02-${String(1 + (i % 28)).padStart(2, '0')}T12:00:00Z,${i % 2 === 0 ? 'DE' : 'FR'}`).join('\n')}\n`;

  it('reads the body whatever the case and parameters of its Content-Type, and an Arrow file as a stream', async () => {
    const csv = 'at,country\n2026-02-04,DE\n';
    const plain = await post(csv, { 'content-type': 'text/csv' });
    expect(plain.status).toBe(200);
    expect(json(plain).data).toEqual([{ at: '2026-02-04T23:59:59.999999Z', country: 'DE', date: '2026-02-02', tag: 'DE02-v2', floor_applied: false }]);
    for (const type of ['text/csv; charset=utf-8', 'Text/CSV', ' text/csv ;header=present']) {
      const r = await post(csv, { 'content-type': type });
      expect(r.status, type).toBe(200);
      expect(json(r).data, type).toEqual(json(plain).data);
    }
    const events = new Table({
      at: vectorFromArray([new Date('2026-02-04T12:00:00Z')], new TimestampMillisecond()),
      country: vectorFromArray(['DE'], new Utf8()),
    });
    const asStream = await post(tableToIPC(events, 'stream'), { 'content-type': 'application/vnd.apache.arrow.stream' });
    const asFile = await post(tableToIPC(events, 'file'), { 'content-type': 'application/vnd.apache.arrow.file' });
    expect(asStream.status).toBe(200);
    expect(asFile.status, asFile.body.toString()).toBe(200);
    expect(json(asFile).data).toEqual(json(asStream).data);
    expect(json(asFile).data[0]).toMatchObject({ at: '2026-02-04T12:00:00.000000Z', country: 'DE', tag: 'DE02-v1' });
    const json1 = await post(JSON.stringify([{ at: '2026-02-04', country: 'DE' }]), { 'content-type': 'APPLICATION/JSON; charset=utf-8' });
    expect(json(json1).data).toEqual(json(plain).data);
  });

  it('undoes gzip and x-gzip (any case), reads identity and no encoding as they are, refuses others with 415', async () => {
    const csv = 'at,country\n2026-02-04,DE\n';
    const want = json(await post(csv, { 'content-type': 'text/csv' })).data;
    for (const enc of ['gzip', 'x-gzip', ' GZip ']) {
      const r = await post(gzipSync(Buffer.from(csv)), { 'content-type': 'text/csv', 'content-encoding': enc });
      expect(r.status, enc).toBe(200);
      expect(json(r).data, enc).toEqual(want);
    }
    for (const enc of ['identity', 'IDENTITY', '']) {
      const r = await post(csv, { 'content-type': 'text/csv', 'content-encoding': enc });
      expect(r.status, `"${enc}"`).toBe(200);
      expect(json(r).data).toEqual(want);
    }
    for (const enc of ['deflate', 'gzip, br']) {
      const r = await post(csv, { 'content-type': 'text/csv', 'content-encoding': enc });
      expect(r.status, enc).toBe(415);
      const error = (JSON.parse(r.body.toString()) as { error: { code: string; message: string } }).error;
      expect(error.code).toBe('unsupported_media_type');
      expect(error.message, enc).toContain(`not ${JSON.stringify(enc)}`);
    }
    const type = await post(csv, { 'content-type': 'text/plain' });
    expect(type.status).toBe(415);
    expect((JSON.parse(type.body.toString()) as { error: { message: string } }).error.message).toContain(
      'text/csv, application/json or application/vnd.apache.arrow.stream',
    );
    expect((JSON.parse(type.body.toString()) as { error: { message: string } }).error.message).toContain('not "text/plain"');
    const notGzip = await post(csv, { 'content-type': 'text/csv', 'content-encoding': 'gzip' });
    expect(notGzip.status).toBe(400);
    expect((JSON.parse(notGzip.body.toString()) as { error: { code: string; message: string } }).error.code).toBe('invalid_body');
  });

  it('compresses a large answer as asked (gzip, br), sends a small one plain, and says Vary', async () => {
    const plain = await post(manyEvents, { 'content-type': 'text/csv', 'accept-encoding': 'identity' });
    expect(plain.status).toBe(200);
    expect(plain.body.length).toBeGreaterThan(1024);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept, Accept-Encoding');
    const gz = await post(manyEvents, { 'content-type': 'text/csv', 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('Accept, Accept-Encoding');
    expect(gz.body.length).toBeLessThan(plain.body.length);
    const br = await post(manyEvents, { 'content-type': 'text/csv', 'accept-encoding': 'br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.body.length).toBeLessThan(plain.body.length);
    // The same answer but its own request id and retrieved_at.
    const same = (b: Buffer) => (JSON.parse(b.toString('utf8')) as { data: unknown }).data;
    expect(same(gunzipSync(gz.body))).toEqual(same(plain.body));
    expect(same(brotliDecompressSync(br.body))).toEqual(same(plain.body));
    // Arrow answers too.
    const arrow = await post(manyEvents, { 'content-type': 'text/csv', 'accept-encoding': 'gzip' }, 'columns=tag&format=arrow');
    expect(arrow.headers['content-encoding']).toBe('gzip');
    expect(tableFromIPC(gunzipSync(arrow.body)).numRows).toBe(200);
    // A small answer goes out plain whatever is asked.
    const small = await post('at,country\n2026-02-04,DE\n', { 'content-type': 'text/csv', 'accept-encoding': 'gzip' }, 'columns=tag&format=csv');
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body.toString('utf8')).toContain('2026-02-04T23:59:59.999999Z,DE,2026-02-02,DE02-v2,false');
    // An answer of exactly 1,024 bytes is compressed (the passthrough cell pads it to that size).
    const sized = (pad: number) =>
      post(`id,at,country\n${'x'.repeat(pad)},2026-02-04,DE\n`, { 'content-type': 'text/csv', 'accept-encoding': 'identity' }, 'columns=tag&format=csv');
    const one = (await sized(1)).body.length;
    const exact = 1 + 1024 - one;
    expect((await sized(exact)).body.length).toBe(1024);
    const at1024 = await post(
      `id,at,country\n${'x'.repeat(exact)},2026-02-04,DE\n`,
      { 'content-type': 'text/csv', 'accept-encoding': 'gzip' },
      'columns=tag&format=csv',
    );
    expect(at1024.headers['content-encoding']).toBe('gzip');
    const at1023 = await post(
      `id,at,country\n${'x'.repeat(exact - 1)},2026-02-04,DE\n`,
      { 'content-type': 'text/csv', 'accept-encoding': 'gzip' },
      'columns=tag&format=csv',
    );
    expect(at1023.body.length).toBe(1023);
    expect(at1023.headers['content-encoding']).toBeUndefined();
  });

  it("stamps the answer with the server clock's time, as a query's answer is (retrieved_at, x-data-age-hours)", async () => {
    const join = await post('at,country\n2026-02-04,DE\n', { 'content-type': 'text/csv' });
    const query = await h.get('/gbsi_eu/system_stress?country=DE');
    const stamp = (m: Record<string, unknown>) => m.retrieved_at;
    const joinMeta = (JSON.parse(join.body.toString('utf8')) as { metadata: Record<string, unknown> }).metadata;
    expect(stamp(joinMeta)).toBe(new Date(h.clock.now()).toISOString());
    expect(stamp(joinMeta)).toBe(stamp((query.body as { metadata: Record<string, unknown> }).metadata));
    expect(join.headers['x-data-age-hours']).toBeDefined();
    expect(join.headers['x-data-age-hours']).toBe(query.headers.get('x-data-age-hours'));
  });
});
