/**
 * Arrow answers from the response cache, over a real server: the record batch is the cached
 * middle, the schema message (with this request's envelope) a per-request prefix. A repeated
 * query is a hit (the metrics say so) and reads, with apache-arrow and nodejs-polars, as the
 * same table as the first answer, with its own record id; the two bodies differ only inside
 * the schema message. gzip hits carry the prefix in stored blocks and a combined CRC-32 (zlib
 * and curl check it); brotli Arrow is compressed whole per request and never cached.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { tableFromIPC, type Table } from 'apache-arrow';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import type { ManualClock } from '../src/time/clock.js';
import { pitSnapshot, RECORD_ID, type PitRow } from './support/fixtures.js';
import { ADMIN_KEY, TEST_KEY, startHarness, type Harness } from './support/harness.js';
import { parsePromText, total } from './support/prom-text.js';

const ZONES = ['DE', 'FR', 'NL'];
const TAGS = ['plain', '', 'with,comma', 'ünïcødé ✓'];

/** 3 zones x 2000 days (a whole-history page is over 256 KB: compressed off the serving thread); nulls, strings; tags and values carry the generation. */
function rows(generation: number): PitRow[] {
  const out: PitRow[] = [];
  for (let d = 0; d < 2000; d++) {
    const date = new Date(Date.UTC(2020, 0, 1) + d * 86_400_000).toISOString().slice(0, 10);
    for (const [i, zone] of ZONES.entries())
      out.push({
        date,
        eff: date,
        obs: `${date}T06:00:00Z`,
        key: { bidding_zone: zone },
        tag: `g${generation}-${TAGS[(d + i) % TAGS.length]}`,
        value: d % 13 === 0 ? null : generation * 10_000 + d + i / 4,
      });
  }
  return out;
}

const DATASET = { productId: 'pemi', dataset: 'grid_stress', spec: pitSnapshot(['bidding_zone'], rows(1)) };
const BIG = '/pemi/grid_stress?latest=false&limit=10000&format=arrow';
const PAGE = '/pemi/grid_stress?latest=false&limit=500&format=arrow';

interface Raw {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly bytes: Buffer;
}

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ datasets: [DATASET], server: { responseCacheBytes: 16 << 20 } });
});
afterAll(async () => h?.close());

/** node:http, not fetch: the bytes on the wire, encoded or not. */
function raw(path: string, encoding = 'identity'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(h.url + path, { headers: { 'x-api-key': TEST_KEY, 'accept-encoding': encoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The response cache's hits and misses so far, from the server's own /metrics. */
async function cacheEvents(): Promise<{ hit: number; miss: number }> {
  const r = await h.get('/metrics', ADMIN_KEY);
  const samples = parsePromText(r.text);
  const of = (event: string): number => total(samples, 'pitcache_cache_events_total', { cache: 'response', event });
  return { hit: of('hit'), miss: of('miss') };
}

/** Runs `ask` and returns its answers with the cache events it caused. */
async function counted<T>(ask: () => Promise<T>): Promise<{ value: T; hit: number; miss: number }> {
  const before = await cacheEvents();
  const value = await ask();
  const after = await cacheEvents();
  return { value, hit: after.hit - before.hit, miss: after.miss - before.miss };
}

/** Bytes of the stream's first message, the schema: continuation marker, metadata length, metadata (no body). */
function schemaLength(stream: Buffer): number {
  expect(stream.readUInt32LE(0)).toBe(0xffffffff);
  return 8 + stream.readInt32LE(4);
}

function envelopeOf(t: Table): Record<string, unknown> & { metadata: Record<string, unknown> } {
  return JSON.parse(t.schema.metadata.get('pitcache.envelope')!) as Record<string, unknown> & { metadata: Record<string, unknown> };
}

/** What must be equal between two answers to one request: everything but retrieved_at, record_id and data_age_hours. */
function stableEnvelope(t: Table): unknown {
  const { retrieved_at: _r, record_id: _i, data_age_hours: _a, ...metadata } = envelopeOf(t).metadata;
  return { ...envelopeOf(t), metadata };
}

/** A decoded table as apache-arrow reads it: fields, series key, envelope without the per-request fields, and every row. */
function asArrow(stream: Buffer): { fields: string[]; seriesKey: string | undefined; envelope: unknown; rows: unknown[] } {
  const t = tableFromIPC(stream);
  return {
    fields: t.schema.fields.map((f) => `${f.name}: ${String(f.type)}`),
    seriesKey: t.schema.metadata.get('pitcache.series_key'),
    envelope: stableEnvelope(t),
    rows: t.toArray().map((r) => (r as { toJSON(): unknown }).toJSON()),
  };
}

/** The same stream as nodejs-polars (Rust arrow2) reads it. */
function asPolars(stream: Buffer): { columns: string[]; rows: unknown[] } {
  const df = pl.readIPCStream(stream);
  return { columns: df.columns, rows: df.toRecords() };
}

/** The per-request part of an answer is the request's own: its record id, and the clock's retrieved_at. */
function expectOwnStamp(r: Raw, stream: Buffer): void {
  const env = envelopeOf(tableFromIPC(stream));
  expect(env.metadata['record_id']).toMatch(RECORD_ID);
  expect(env.metadata['record_id']).toBe(r.headers['x-request-id']);
  expect(Date.parse(env.metadata['retrieved_at'] as string)).toBe((h.clock as ManualClock).now());
}

describe('Arrow answers from the response cache', () => {
  it('a repeated query is a hit: the same table (apache-arrow, polars) with its own record id; the bodies differ only inside the schema message', async () => {
    const clock = h.clock as ManualClock;
    const first = await counted(() => raw(PAGE));
    expect(first).toMatchObject({ hit: 0, miss: 1 });
    clock.advance(3_600_000);
    // The second ask is admitted (doorkeeper), the third is served from the cache.
    const second = await counted(() => raw(PAGE));
    expect(second).toMatchObject({ hit: 0, miss: 1 });
    clock.advance(3_600_000);
    const third = await counted(() => raw(PAGE));
    expect(third).toMatchObject({ hit: 1, miss: 0 });

    const a = first.value.bytes;
    const c = third.value.bytes;
    expect(first.value.headers['content-type']).toBe('application/vnd.apache.arrow.stream');
    expect(third.value.headers['content-type']).toBe('application/vnd.apache.arrow.stream');
    expect(asArrow(c)).toEqual(asArrow(a));
    expect(asArrow(c).rows).toHaveLength(500);
    expect(asPolars(c)).toEqual(asPolars(a));
    expectOwnStamp(third.value, c);
    const [ea, ec] = [envelopeOf(tableFromIPC(a)), envelopeOf(tableFromIPC(c))];
    expect(ec.metadata['record_id']).not.toBe(ea.metadata['record_id']);
    expect(Date.parse(ec.metadata['retrieved_at'] as string) - Date.parse(ea.metadata['retrieved_at'] as string)).toBe(2 * 3_600_000);
    expect((ec.metadata['data_age_hours'] as number) - (ea.metadata['data_age_hours'] as number)).toBeCloseTo(2, 9);
    // After the schema message, the cached batch and the end-of-stream marker are the same bytes.
    expect(c.subarray(schemaLength(c)).equals(a.subarray(schemaLength(a)))).toBe(true);
    expect(c.subarray(0, schemaLength(c)).equals(a.subarray(0, schemaLength(a)))).toBe(false);
    // The headers of a hit are those of the first answer (the envelope in headers, the ETag).
    for (const name of ['x-count', 'x-total-count', 'x-next-cursor', 'etag', 'link']) expect(third.value.headers[name], name).toBe(first.value.headers[name]);
  });

  it('gzip: a hit puts a fresh schema in front of the cached deflate data; zlib and curl --compressed check the combined CRC-32', async () => {
    for (const path of [PAGE, BIG]) {
      const plain = await raw(path);
      const answers: Raw[] = [];
      const events = await counted(async () => {
        for (let i = 0; i < 3; i++) answers.push(await raw(path, 'gzip'));
      });
      // A page this large is compressed off the serving thread and kept at once (no doorkeeper): the second ask is a hit.
      expect(events, path).toMatchObject(path === BIG ? { hit: 2, miss: 1 } : { hit: 1, miss: 2 });
      for (const r of answers) {
        expect(r.headers['content-encoding']).toBe('gzip');
        expect(r.bytes.length).toBeLessThan(plain.bytes.length / 2);
        // gunzipSync checks the trailer's CRC-32 and length: a wrong combine fails here.
        const stream = zlib.gunzipSync(r.bytes);
        expect(asArrow(stream)).toEqual(asArrow(plain.bytes));
        expect(asPolars(stream)).toEqual(asPolars(plain.bytes));
        expectOwnStamp(r, stream);
        expect(stream.subarray(schemaLength(stream)).equals(plain.bytes.subarray(schemaLength(plain.bytes)))).toBe(true);
      }
      // curl (libcurl's zlib) on a hit: it checks the CRC-32 too, and the stream reads.
      const viaCurl = await counted(() =>
        promisify(execFile)('curl', ['-sS', '--fail', '--compressed', '-H', `x-api-key: ${TEST_KEY}`, '-H', 'accept-encoding: gzip', `${h.url}${path}`], {
          encoding: 'buffer',
          maxBuffer: 1 << 26,
        }),
      );
      expect(viaCurl).toMatchObject({ hit: 1, miss: 0 });
      expect(asArrow(viaCurl.value.stdout)).toEqual(asArrow(plain.bytes));
    }
    // The whole history is over 256 KB: its middle was compressed off the serving thread.
    expect((await raw(BIG)).bytes.length).toBeGreaterThan(256 * 1024);
  });

  it('an answer compressed off the thread keeps its own request while others are answered meanwhile: its ETag, and the entry it leaves', async () => {
    // A JSON whole history in gzip (over 256 KB: compressed on the thread pool; a new query
    // each attempt, as it is kept at once) is asked together with small identity pages of
    // other queries, answered while it is compressed (each refills the thread's request key).
    const big = (attempt: number): string => `/pemi/grid_stress?latest=false&limit=${10_000 - attempt}&columns=tag&as_of=2026-01-01`;
    const small = (i: number): string => `/pemi/grid_stress?latest=false&limit=${10 + i}&as_of=2026-01-01`;
    const alone = await Promise.all(Array.from({ length: 4 }, (_, i) => raw(small(i))));
    let overlapped = false;
    for (let attempt = 0; attempt < 10 && !overlapped; attempt++) {
      const finished: string[] = [];
      const asks = [big(attempt), ...Array.from({ length: 4 }, (_, i) => small(i))].map((p, i) =>
        raw(p, i === 0 ? 'gzip' : 'identity').then((r) => {
          finished.push(p);
          return r;
        }),
      );
      const [b, ...others] = await Promise.all(asks);
      overlapped = finished[0] !== big(attempt);
      expect(b!.headers['content-encoding']).toBe('gzip');
      expect(zlib.gunzipSync(b!.bytes).length).toBeGreaterThan(256 * 1024);
      for (const [i, r] of others.entries()) {
        expect(r.headers['etag'], small(i)).toBe(alone[i]!.headers['etag']);
        expect(r.headers['content-encoding'], small(i)).toBeUndefined();
        expect(JSON.parse(r.bytes.toString()).data, small(i)).toEqual(JSON.parse(alone[i]!.bytes.toString()).data);
      }
      // Asked again alone, it is served from what it left under its own request: same ETag, same rows.
      const again = await counted(() => raw(big(attempt), 'gzip'));
      expect(again.hit, big(attempt)).toBe(1);
      expect(again.value.headers['etag']).toBe(b!.headers['etag']);
      expect(JSON.parse(zlib.gunzipSync(again.value.bytes).toString()).data).toEqual(JSON.parse(zlib.gunzipSync(b!.bytes).toString()).data);
    }
    expect(overlapped).toBe(true);
    for (let i = 0; i < 4; i++) {
      const r = await raw(small(i));
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(JSON.parse(r.bytes.toString()).data).toEqual(JSON.parse(alone[i]!.bytes.toString()).data);
    }
  });

  it('br: Arrow is compressed whole per request and never asks the cache; every answer decodes', async () => {
    const plain = await raw(PAGE);
    for (const path of [PAGE, BIG]) {
      const answers: Raw[] = [];
      const events = await counted(async () => {
        for (let i = 0; i < 3; i++) answers.push(await raw(path, 'br'));
      });
      expect(events, path).toMatchObject({ hit: 0, miss: 0 });
      for (const r of answers) {
        expect(r.headers['content-encoding']).toBe('br');
        const stream = zlib.brotliDecompressSync(r.bytes);
        expectOwnStamp(r, stream);
        if (path === PAGE) {
          expect(asArrow(stream)).toEqual(asArrow(plain.bytes));
          expect(asPolars(stream)).toEqual(asPolars(plain.bytes));
        } else expect(tableFromIPC(stream).numRows).toBe(3 * 2000);
      }
    }
    const { stdout } = await promisify(execFile)(
      'curl',
      ['-sS', '--fail', '--compressed', '-H', `x-api-key: ${TEST_KEY}`, '-H', 'accept-encoding: br', `${h.url}${PAGE}`],
      {
        encoding: 'buffer',
        maxBuffer: 1 << 26,
      },
    );
    expect(asArrow(stdout)).toEqual(asArrow(plain.bytes));
  });

  it('a projection and each page of a cursor chain are entries of their own', async () => {
    const variants = [PAGE, `${PAGE}&columns=value`, `${PAGE}&columns=tag`];
    const firstOf = new Map<string, Buffer>();
    // Follow the chain (the cursor is in the key) for two pages, for each projection.
    const chain = async (start: string): Promise<string[]> => {
      const t = tableFromIPC((await raw(start)).bytes);
      const next = envelopeOf(t)['next_cursor'] as string;
      expect(next).toEqual(expect.any(String));
      return [start, `${start}&cursor=${next}`];
    };
    const paths = (await Promise.all(variants.map(chain))).flat();
    for (const p of paths) firstOf.set(p, (await raw(p)).bytes);
    for (const p of paths) await raw(p); // each asked twice at least: kept
    const events = await counted(async () => {
      for (const p of paths) {
        const hit = (await raw(p)).bytes;
        expect(asArrow(hit), p).toEqual(asArrow(firstOf.get(p)!));
      }
    });
    expect(events).toMatchObject({ hit: paths.length, miss: 0 });
    // Distinct entries really hold distinct bodies: columns differ by projection, rows by page.
    const fields = variants.map((v) => asArrow(firstOf.get(v)!).fields);
    expect(new Set(fields.map((f) => f.join())).size).toBe(3);
    expect(fields[1]!.some((f) => f.startsWith('tag:'))).toBe(false);
    expect(fields[2]!.some((f) => f.startsWith('value:'))).toBe(false);
    for (const v of variants) {
      const [p1, p2] = [asArrow(firstOf.get(v)!).rows, asArrow(firstOf.get(paths[paths.indexOf(v) + 1]!)!).rows];
      expect(p1).toHaveLength(500);
      expect(p2).toHaveLength(500);
      expect(p2[0]).not.toEqual(p1[0]);
    }
  });

  it('walk_forward and vintages (computed columns in the schema) are served from the cache as first written', async () => {
    for (const path of [
      '/pemi/grid_stress/walk_forward?decision_from=2021-03-01&decision_to=2021-03-20&format=arrow',
      '/pemi/grid_stress/vintages?date_from=2021-03-01&date_to=2021-03-20&format=arrow',
    ]) {
      const first = await raw(path);
      expect(first.status, first.bytes.toString()).toBe(200);
      await raw(path);
      const third = await counted(() => raw(path));
      expect(third, path).toMatchObject({ hit: 1, miss: 0 });
      expect(asArrow(third.value.bytes)).toEqual(asArrow(first.bytes));
      expect(asPolars(third.value.bytes)).toEqual(asPolars(first.bytes));
      expectOwnStamp(third.value, third.value.bytes);
    }
  });

  it('a new generation never gets a middle of the old one', async () => {
    const paths = [PAGE, `${PAGE}&columns=tag`];
    for (const p of paths) for (let i = 0; i < 3; i++) for (const enc of ['identity', 'gzip']) await raw(p, enc);
    await writeGeneration(h.source, DATASET, buildArrowSnapshot(pitSnapshot(['bidding_zone'], rows(2))), 2, '2026-11-02T00:00:00Z');
    const refresh = await h.get('/admin/refresh', ADMIN_KEY, { method: 'POST' });
    expect(refresh.body.changed).toEqual(['pemi/grid_stress']);
    for (const p of paths)
      for (let i = 0; i < 3; i++)
        for (const enc of ['identity', 'gzip']) {
          const r = await raw(p, enc);
          const t = tableFromIPC(enc === 'gzip' ? zlib.gunzipSync(r.bytes) : r.bytes);
          expect(envelopeOf(t).metadata['generation']).toBe(2);
          const tags = t.getChild('tag')!.toArray() as string[];
          expect(tags).toHaveLength(500);
          for (const tag of tags) expect(tag.startsWith('g2-'), `${p} ${enc}: ${tag}`).toBe(true);
        }
  });
});
