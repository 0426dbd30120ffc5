/**
 * Contract 9 over a real server: negotiation and its errors, projection in every format,
 * CSV quoting, zero-row Arrow, compression decoded by zlib and by curl (libcurl's zlib and
 * libbrotli), ETag/304, HEAD, and the response cache serving encoded bodies.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import http from 'node:http';
import zlib from 'node:zlib';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { pitSnapshot, type PitRow } from './support/fixtures.js';

const rows: PitRow[] = [];
const tags = ['plain', '', 'with,comma', 'with "quote"', 'line\nbreak', 'cr\rhere', 'ünïcødé ✓'];
for (let d = 0; d < 400; d++) {
  const date = new Date(Date.UTC(2026, 2, 2) + d * 86_400_000).toISOString().slice(0, 10);
  for (const zone of ['DE', 'FR']) {
    rows.push({
      date,
      eff: date,
      obs: `${date}T06:00:00Z`,
      key: { bidding_zone: zone },
      tag: tags[(d + zone.length) % tags.length]!,
      value: d % 11 === 0 ? null : d / 8,
    });
  }
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    datasets: [{ productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows) }],
    server: { responseCacheBytes: 8 << 20 },
  });
});
afterAll(async () => h?.close());

const BIG = '/pemi/grid_stress?latest=false&limit=600';

/** node:http, not fetch: fetch would decode the body, and these tests look at the bytes on the wire. */
function raw(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; headers: { get(name: string): string | null }; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(h.url + path, { method, headers: { 'x-api-key': TEST_KEY, 'accept-encoding': 'identity', ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const get = (name: string): string | null => {
          const v = res.headers[name.toLowerCase()];
          return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
        };
        resolve({ status: res.statusCode ?? 0, headers: { get }, bytes: Buffer.concat(chunks) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/** The JSON body without its per-request metadata (retrieved_at, record_id differ between two answers). */
function withoutMetadata(text: string): string {
  return text.slice(0, text.indexOf(',"metadata":'));
}

describe('negotiation errors', () => {
  it('an unknown format is 400 naming the parameter, with the contract error body', async () => {
    const r = await raw('/pemi/grid_stress?format=parquet');
    const body = JSON.parse(r.bytes.toString());
    expect(r.status).toBe(400);
    expect(body.error).toMatchObject({ status: 400, code: 'invalid_parameter', param: 'format' });
    expect(body.record_id).toMatch(/^req_[0-9a-z]{16,}$/);
  });

  it('an Accept that admits none of json, csv, arrow is 406 not_acceptable; format= overrides it', async () => {
    const r = await raw('/pemi/grid_stress', { accept: 'text/html, application/xml;q=0.9' });
    expect(r.status).toBe(406);
    expect(JSON.parse(r.bytes.toString()).error).toMatchObject({ status: 406, code: 'not_acceptable' });
    expect((await raw('/pemi/grid_stress?format=csv', { accept: 'text/html' })).status).toBe(200);
  });

  it('Accept picks the format by q-value', async () => {
    const r = await raw('/pemi/grid_stress', { accept: 'application/json;q=0.2, application/vnd.apache.arrow.stream;q=0.9, text/csv;q=0.5' });
    expect(r.headers.get('content-type')).toBe('application/vnd.apache.arrow.stream');
    expect(tableFromIPC(r.bytes).numRows).toBe(2);
  });

  it('an unknown column is 400 listing the dataset columns', async () => {
    const r = await raw('/pemi/grid_stress?columns=value,nope');
    const e = JSON.parse(r.bytes.toString()).error;
    expect([r.status, e.code, e.param]).toEqual([400, 'invalid_parameter', 'columns']);
    expect(e.message).toContain('date, str_effective_at, str_observed_at, str_ingested_at, model_version, bidding_zone, value, tag');
  });
});

describe('columns= in every format', () => {
  it('the named columns plus date and the series key, in schema order', async () => {
    const q = '/pemi/grid_stress?latest=false&limit=5&columns=tag,value';
    const json = JSON.parse((await raw(q)).bytes.toString());
    expect(Object.keys(json.data[0])).toEqual(['date', 'bidding_zone', 'value', 'tag']);
    const csv = (await raw(`${q}&format=csv`)).bytes.toString();
    expect(csv.split('\n')[0]).toBe('date,bidding_zone,value,tag');
    const t = tableFromIPC((await raw(`${q}&format=arrow`)).bytes);
    expect(t.schema.fields.map((f) => f.name)).toEqual(['date', 'bidding_zone', 'value', 'tag']);
  });

  it('a cursor chain may change columns and format between pages', async () => {
    const first = JSON.parse((await raw('/pemi/grid_stress?latest=false&limit=3')).bytes.toString());
    const second = await raw(`/pemi/grid_stress?latest=false&limit=3&columns=value&format=csv&cursor=${first.next_cursor}`);
    expect(second.status).toBe(200);
    const all = JSON.parse((await raw('/pemi/grid_stress?latest=false&limit=6')).bytes.toString());
    const csvDates = second.bytes
      .toString()
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(',')[0]);
    expect(csvDates).toEqual(all.data.slice(3).map((r: { date: string }) => r.date));
  });
});

describe('CSV text', () => {
  it('RFC 4180: header, LF line ends, quoting of comma, quote, CR and LF, "" for an empty string, nothing for null', async () => {
    const text = (await raw('/pemi/grid_stress?latest=false&limit=30&format=csv&columns=tag,value')).bytes.toString();
    const json = JSON.parse((await raw('/pemi/grid_stress?latest=false&limit=30&columns=tag,value')).bytes.toString());
    const expected = [
      'date,bidding_zone,value,tag',
      ...json.data.map((r: { date: string; bidding_zone: string; value: number | null; tag: string }) => {
        const tag = r.tag === '' || /[",\r\n]/.test(r.tag) ? `"${r.tag.replace(/"/g, '""')}"` : r.tag;
        return `${r.date},${r.bidding_zone},${r.value === null ? '' : r.value},${tag}`;
      }),
    ].join('\n');
    expect(text).toBe(expected + '\n');
    expect(text).toContain(',""\n');
    expect(text).toContain('"with ""quote"""');
    expect(text).toContain('"line\nbreak"');
  });
});

describe('zero rows', () => {
  it('arrow: a schema and no batch; csv: the header only; json: empty data', async () => {
    const q = '/pemi/grid_stress?bidding_zone=XX';
    const bytes = (await raw(`${q}&format=arrow`)).bytes;
    // The schema message, then at once the end-of-stream marker: no record batch (apache-arrow's
    // reader would show an empty batch for such a stream, so the framing is read here).
    const schemaEnd = 8 + bytes.readInt32LE(4);
    expect(bytes.readUInt32LE(0)).toBe(0xffffffff);
    expect(bytes.subarray(schemaEnd).toString('hex')).toBe('ffffffff00000000');

    const t = tableFromIPC(bytes);
    expect(t.numRows).toBe(0);
    expect(t.schema.fields.length).toBe(8);
    expect((await raw(`${q}&format=csv`)).bytes.toString()).toBe(
      'date,str_effective_at,str_observed_at,str_ingested_at,model_version,bidding_zone,value,tag\n',
    );
    expect(JSON.parse((await raw(q)).bytes.toString()).data).toEqual([]);
  });
});

describe('compression', () => {
  it.each(['json', 'csv', 'arrow'])('%s: gzip and br decode (zlib) to the identity answer; small bodies go plain; Vary on all', async (format) => {
    const q = `${BIG}&format=${format}`;
    const plain = await raw(q);
    for (const [enc, decode] of [
      ['gzip', zlib.gunzipSync],
      ['br', zlib.brotliDecompressSync],
    ] as const) {
      const r = await raw(q, { 'accept-encoding': enc });
      expect(r.headers.get('content-encoding')).toBe(enc);
      expect(r.headers.get('vary')).toBe('Accept, Accept-Encoding');
      expect(r.bytes.length).toBeLessThan(plain.bytes.length / 2);
      const decoded = decode(r.bytes);
      if (format === 'json') expect(withoutMetadata(decoded.toString())).toBe(withoutMetadata(plain.bytes.toString()));
      else if (format === 'csv') expect(decoded.equals(plain.bytes)).toBe(true);
      else expect(tableFromIPC(decoded).numRows).toBe(600);
    }
    const small = await raw('/pemi/grid_stress?limit=1&columns=value&format=csv', { 'accept-encoding': 'gzip, br' });
    expect(small.headers.get('content-encoding')).toBeNull();
    expect(small.headers.get('vary')).toBe('Accept, Accept-Encoding');
  });

  it('q=0 refuses a coding; identity when nothing else is acceptable', async () => {
    expect((await raw(BIG, { 'accept-encoding': 'br;q=0, gzip' })).headers.get('content-encoding')).toBe('gzip');
    expect((await raw(BIG, { 'accept-encoding': 'br;q=0, gzip;q=0' })).headers.get('content-encoding')).toBeNull();
  });

  it('curl --compressed (libcurl with zlib and libbrotli) reads the answers, first and cached, and their record ids differ', async () => {
    // Async: the server runs in this process, a blocking child would starve it.
    const curl = async (enc: string): Promise<string> =>
      (
        await promisify(execFile)('curl', ['-sS', '--compressed', '-H', `x-api-key: ${TEST_KEY}`, '-H', `accept-encoding: ${enc}`, `${h.url}${BIG}`], {
          maxBuffer: 1 << 26,
        })
      ).stdout;
    for (const enc of ['gzip', 'br']) {
      const bodies = [await curl(enc), await curl(enc), await curl(enc)];
      const parsed = bodies.map((b) => JSON.parse(b) as { count: number; metadata: { record_id: string } });
      expect(parsed.map((p) => p.count)).toEqual([600, 600, 600]);
      expect(new Set(parsed.map((p) => p.metadata.record_id)).size).toBe(3);
      expect(new Set(bodies.map(withoutMetadata)).size).toBe(1);
    }
  });

  it('a large page is compressed off the serving thread and still decodes', async () => {
    const r = await raw('/pemi/grid_stress?latest=false&limit=800', { 'accept-encoding': 'br' });
    expect(r.headers.get('content-encoding')).toBe('br');
    expect(JSON.parse(zlib.brotliDecompressSync(r.bytes).toString()).count).toBe(800);
  });
});

describe('ETag, 304 and HEAD', () => {
  it('a weak ETag per request (format, columns, encoding, cursor); If-None-Match answers 304 with no body', async () => {
    const a = await raw('/pemi/grid_stress?limit=5');
    const etag = a.headers.get('etag')!;
    expect(etag).toMatch(/^W\/"g1-[0-9a-z]+"$/);
    const again = await raw('/pemi/grid_stress?limit=5', { 'if-none-match': etag });
    expect([again.status, again.bytes.length, again.headers.get('etag')]).toEqual([304, 0, etag]);
    const others = await Promise.all([
      raw('/pemi/grid_stress?limit=5&format=csv'),
      raw('/pemi/grid_stress?limit=5&columns=value'),
      raw('/pemi/grid_stress?limit=5', { 'accept-encoding': 'gzip' }),
      raw('/pemi/grid_stress?limit=6'),
    ]);
    expect(new Set([etag, ...others.map((o) => o.headers.get('etag'))]).size).toBe(5);
    expect((await raw('/pemi/grid_stress?limit=5&format=csv', { 'if-none-match': etag })).status).toBe(200);
  });

  it('HEAD answers as GET would, without the body', async () => {
    for (const format of ['json', 'csv', 'arrow']) {
      const get = await raw(`${BIG}&format=${format}`, { 'accept-encoding': 'gzip' });
      const head = await raw(`${BIG}&format=${format}`, { 'accept-encoding': 'gzip' }, 'HEAD');
      expect(head.status).toBe(200);
      expect(head.bytes.length).toBe(0);
      for (const name of ['content-type', 'content-encoding', 'etag', 'x-count', 'x-total-count', 'x-next-cursor', 'link', 'vary'])
        expect(head.headers.get(name), name).toBe(get.headers.get(name));
      expect(head.headers.get('content-length')).toBe(get.headers.get('content-length'));
    }
  });
});
