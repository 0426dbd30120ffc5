/**
 * Contract 12 with real servers on one shared source folder, for one serving thread and
 * for two: server A starts on generation 1 and starts cursor chains; generation 2 is
 * published; server B, started after, continues A's cursors with generation 1's rows
 * (loading generation 1 from history/, once however many ask) byte for byte as A answers
 * them. generation=N on every endpoint and format; 400 generation_unavailable for an
 * absent, pruned or refused generation; an answer with as_of and generation is immutable.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { writeGeneration } from '../src/snapshot/write-generation.js';
import { ManualClock } from '../src/time/clock.js';
import { expectError } from './support/fixtures.js';
import { TEST_KEY, type Reply } from './support/harness.js';
import { GRID, T0, gridSpec, serve, type Served } from './support/s3-harness.js';

/** Counts reads of snapshot objects: one load per generation, whoever asks. */
class CountingSource extends LocalSource {
  readonly objectReads = new Map<string, number>();
  override readObject(path: string): Promise<Uint8Array> {
    this.objectReads.set(path, (this.objectReads.get(path) ?? 0) + 1);
    return super.readObject(path);
  }
  // Loads stream their objects (hashed as they arrive).
  override readObjectStreaming(path: string, sizeHint: number | undefined, onBytes: (bytes: Uint8Array) => void): Promise<Uint8Array> {
    this.objectReads.set(path, (this.objectReads.get(path) ?? 0) + 1);
    return super.readObjectStreaming(path, sizeHint, onBytes);
  }
}

const ROWS = '/pemi/grid_stress?latest=false&limit=6';
const ENDPOINTS = {
  rows: '/pemi/grid_stress?latest=false&limit=7',
  walk_forward: '/pemi/grid_stress/walk_forward?decision_from=2026-04-02&decision_to=2026-04-05&window=2&limit=9',
  vintages: '/pemi/grid_stress/vintages?limit=8',
} as const;
const FORMATS = ['json', 'csv', 'arrow'] as const;

async function publish(source: LocalSource, g: number): Promise<void> {
  await writeGeneration(source, GRID, buildArrowSnapshot(gridSpec(g, 6)), g, `2026-11-0${g}T00:00:00Z`);
}

/** What is the same in two answers to the same request: the body without the per-request metadata. */
function comparable(r: Reply): unknown {
  expect(r.status, r.text).toBe(200);
  if (r.body === undefined) return r.text;
  const { record_id: _id, retrieved_at: _at, ...metadata } = r.body.metadata as Record<string, unknown>;
  return { ...r.body, metadata };
}

/** Every page of a chain on `s`, from a first page (answered anywhere). */
async function rest(s: Served, path: string, first: Reply): Promise<Reply[]> {
  const pages: Reply[] = [];
  let cursor = first.headers.get('x-next-cursor');
  while (cursor !== null) {
    const page = await s.get(`${path}&cursor=${encodeURIComponent(cursor)}`);
    expect(page.status, page.text).toBe(200);
    pages.push(page);
    cursor = page.headers.get('x-next-cursor');
  }
  return pages;
}

for (const workers of [1, 2]) {
  describe(`generations across two servers sharing one source (${workers} serving thread${workers === 1 ? '' : 's'})`, () => {
    let dir: string;
    let source: CountingSource;
    let a: Served;
    let b: Served;
    /** A's first pages, taken on generation 1 before generation 2 was published */
    const firsts = new Map<string, Reply>();

    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'pitcache-generations-'));
      source = new CountingSource(dir);
      await publish(source, 1);
      // Room for a few superseded generations of this small dataset (the budget itself is tested in retention.test.ts).
      const opts = {
        clock: new ManualClock(T0),
        workers,
        retainMemory: { kind: 'percent', percent: 500 } as const,
        ...(workers > 1 ? { build: 'worker' as const } : {}),
      };
      a = await serve(source, opts);
      for (const [name, path] of Object.entries(ENDPOINTS)) for (const f of FORMATS) firsts.set(`${name}/${f}`, await a.get(`${path}&format=${f}`));
      await publish(source, 2);
      b = await serve(source, opts);
    }, 60_000);
    afterAll(async () => {
      await a?.close();
      await b?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('B serves generation 2 and continues every chain A started on generation 1, page for page as A answers it', async () => {
      expect((await b.get(ROWS)).body.metadata.generation).toBe(2);
      for (const [key, first] of firsts) {
        const [name, format] = key.split('/') as [keyof typeof ENDPOINTS, string];
        const path = `${ENDPOINTS[name]}&format=${format}`;
        expect(first.headers.get('x-generation'), key).toBe('1');
        const onA = await rest(a, path, first);
        const onB = await rest(b, path, first);
        expect(onB.length, key).toBeGreaterThan(0);
        for (const p of onB) expect(p.headers.get('x-generation'), key).toBe('1');
        if (format === 'csv')
          expect(
            onB.map((p) => p.text),
            key,
          ).toEqual(onA.map((p) => p.text));
        else if (format === 'json') expect(onB.map(comparable), key).toEqual(onA.map(comparable));
        else
          expect(
            onB.map((p) => p.headers.get('x-count')),
            key,
          ).toEqual(onA.map((p) => p.headers.get('x-count')));
      }
      // Generation 1's object was read once by A at start and once by B for all those chains.
      expect(source.objectReads.get('pemi/grid_stress/snapshots/00000001.arrow')).toBe(2);
    });

    it('generation=1 answers generation 1 on every endpoint and format, on B as on A', async () => {
      for (const [name, path] of Object.entries(ENDPOINTS)) {
        for (const f of FORMATS) {
          const onA = await a.get(`${path}&format=${f}&generation=1`);
          const onB = await b.get(`${path}&format=${f}&generation=1`);
          expect(onB.headers.get('x-generation'), `${name} ${f}`).toBe('1');
          if (f === 'csv') expect(onB.text).toBe(onA.text);
          else if (f === 'json') expect(comparable(onB)).toEqual(comparable(onA));
          else {
            const rowsOf = async (s: Served): Promise<unknown[]> => {
              const res = await fetch(`${s.url}${path}&format=arrow&generation=1`, { headers: { 'x-api-key': TEST_KEY } });
              expect(res.status).toBe(200);
              return tableFromIPC(new Uint8Array(await res.arrayBuffer()))
                .toArray()
                .map((r) => JSON.stringify(r));
            };
            const rows = await rowsOf(b);
            expect(rows.length).toBe(Number(onA.headers.get('x-count')));
            expect(rows).toEqual(await rowsOf(a));
          }
          // And the current generation still answers without it.
          expect((await b.get(`${path}&format=${f}`)).headers.get('x-generation')).toBe('2');
        }
      }
    });

    it('many requests for a generation not held at once load it once', async () => {
      await publish(source, 3);
      await publish(source, 4);
      const replies = await Promise.all(Array.from({ length: 12 }, () => b.get(`${ROWS}&generation=3&format=csv`)));
      for (const r of replies) expect(r.headers.get('x-generation')).toBe('3');
      expect(new Set(replies.map((r) => r.text)).size).toBe(1);
      expect(source.objectReads.get('pemi/grid_stress/snapshots/00000003.arrow')).toBe(1);
    });

    it('a backtest recorded as (generation, as_of) re-runs to identical bytes after later publishes, and is immutable', async () => {
      const backtest = `${ENDPOINTS.rows}&as_of=2026-04-03&generation=1&format=csv`;
      const recorded = await a.get(backtest);
      expect(recorded.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
      await publish(source, 5);
      await a.refresh();
      expect((await a.get(ROWS)).body.metadata.generation).toBe(5);
      for (const s of [a, b]) {
        const again = await s.get(backtest);
        expect(again.text).toBe(recorded.text);
        expect(again.headers.get('etag')).toBe(recorded.headers.get('etag'));
        const cached = await s.get(backtest, undefined, { headers: { 'if-none-match': recorded.headers.get('etag')! } });
        expect(cached.status).toBe(304);
        expect(cached.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
      }
      // Only both pin the answer: either alone leaves the usual headers.
      expect((await b.get(`${ENDPOINTS.rows}&generation=1`)).headers.get('cache-control')).toBeNull();
      expect((await b.get(`${ENDPOINTS.rows}&as_of=2026-04-03`)).headers.get('cache-control')).toBeNull();
      expect((await b.get(`${ENDPOINTS.walk_forward}&generation=1`)).headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    });

    it('400 generation_unavailable for a generation never published, pruned, or refused; 400 invalid_parameter for a malformed one', async () => {
      expectError(await b.get(`${ROWS}&generation=99`), 400, 'generation_unavailable', 'generation');
      expectError(await b.get(`${ENDPOINTS.vintages}&generation=0`), 400, 'generation_unavailable', 'generation');
      // Pruned: its history manifest is gone (B never held generation 4).
      await rm(join(dir, 'pemi/grid_stress/history/00000004.json'));
      expectError(await b.get(`${ENDPOINTS.walk_forward}&generation=4`), 400, 'generation_unavailable', 'generation');
      // Refused: its object no longer matches the manifest's sha256 (A loaded generation 5 by a refresh; B never did).
      const object = join(dir, 'pemi/grid_stress/snapshots/00000005.arrow');
      const bytes = await readFile(object);
      bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 0xff;
      await writeFile(object, bytes);
      const refused = await b.get(`${ROWS}&generation=5`);
      expectError(refused, 400, 'generation_unavailable', 'generation');
      expect(refused.body.error.message).toMatch(/refused/);
      // A refusal is remembered: asking again downloads nothing.
      const reads = source.objectReads.get('pemi/grid_stress/snapshots/00000005.arrow');
      expectError(await b.get(`${ENDPOINTS.vintages}&generation=5`), 400, 'generation_unavailable', 'generation');
      expect(source.objectReads.get('pemi/grid_stress/snapshots/00000005.arrow')).toBe(reads);
      for (const bad of ['-1', 'x', '1.5', '4294967296', '']) expectError(await b.get(`${ROWS}&generation=${bad}`), 400, 'invalid_parameter', 'generation');
    });

    it('a cursor whose generation cannot be loaded anywhere is 400 cursor_expired; generation is part of the cursor query', async () => {
      const first = await a.get(`${ROWS}&generation=3`);
      const cursor = encodeURIComponent(first.body.next_cursor as string);
      // Another query (no generation, or another one) does not take the cursor.
      expectError(await b.get(`${ROWS}&cursor=${cursor}`), 400, 'invalid_cursor', 'cursor');
      expectError(await b.get(`${ROWS}&generation=2&cursor=${cursor}`), 400, 'invalid_cursor', 'cursor');
      expect((await b.get(`${ROWS}&generation=3&cursor=${cursor}`)).body.metadata.generation).toBe(3);
      // A chain of generation 2 started on B, continued on A, which never held generation 2, after its history is gone.
      const onTwo = await b.get(`${ROWS}&generation=2`);
      expect(onTwo.body.metadata.generation).toBe(2);
      await rm(join(dir, 'pemi/grid_stress/history/00000002.json'));
      expectError(await a.get(`${ROWS}&generation=2&cursor=${encodeURIComponent(onTwo.body.next_cursor as string)}`), 400, 'cursor_expired', 'cursor');
      // B still holds it (superseded, within the budget): its chain goes on there.
      expect((await b.get(`${ROWS}&generation=2&cursor=${encodeURIComponent(onTwo.body.next_cursor as string)}`)).body.metadata.generation).toBe(2);
    });
  });
}
