/**
 * Contract 12, publishing: `pitcache publish` writes generation N's manifest, byte for byte,
 * to history/<N>.json before it replaces manifest.json. A publish that dies between the two
 * writes (the manifest write fails here) leaves a loadable source: manifest.json and the
 * served generation are the previous ones, generation N is not served, and the next
 * publish completes. On a local folder and on S3 (s3rver).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import { S3Source } from '../src/source/s3-source.js';
import type { ConditionalRead, DatasetRef, SnapshotSource, WriteCondition, WriteResult } from '../src/source/snapshot-source.js';
import { publish } from '../src/publish/publish.js';
import { buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import { historyPath, manifestPath } from '../src/snapshot/manifest.js';
import { ManualClock } from '../src/time/clock.js';
import { expectError } from './support/fixtures.js';
import { GRID, T0, expectedValues, gridSpec, serve } from './support/s3-harness.js';
import { startS3rver, type TestS3 } from './support/s3rver.js';

/** A source whose writes are recorded, and whose manifest.json write fails while `crash` is set (the process "dies" there). */
class CrashingSource implements SnapshotSource {
  readonly writes: string[] = [];
  crash = false;
  constructor(private readonly inner: SnapshotSource) {}
  get description(): string {
    return this.inner.description;
  }
  listDatasets(): Promise<DatasetRef[]> {
    return this.inner.listDatasets();
  }
  readIfChanged(path: string, etag: string | null): Promise<ConditionalRead> {
    return this.inner.readIfChanged(path, etag);
  }
  readObject(path: string, sizeHint?: number): Promise<Uint8Array> {
    return this.inner.readObject(path, sizeHint);
  }
  async writeObject(path: string, bytes: Uint8Array, condition?: WriteCondition): Promise<WriteResult> {
    if (this.crash && path.endsWith('/manifest.json')) throw new Error('killed before the manifest write');
    this.writes.push(path);
    return this.inner.writeObject(path, bytes, condition);
  }
}

const MANIFEST = manifestPath(GRID.productId, GRID.dataset);
const history = (g: number): string => historyPath(GRID.productId, GRID.dataset, g);

async function publishGeneration(source: SnapshotSource, g: number, atMs: number): Promise<number> {
  const r = await publish({
    source,
    ...GRID,
    input: { format: 'arrow', bytes: buildArrowSnapshot(gridSpec(g)) },
    rebuild: false,
    replace: true,
    seriesKey: null,
    publishedAtUs: atMs * 1000,
  });
  if (r.status !== 'published') throw new Error('expected a publish');
  return r.manifest.generation;
}

async function text(source: SnapshotSource, path: string): Promise<string> {
  return Buffer.from(await source.readObject(path)).toString('utf8');
}

function suite(name: string, open: () => Promise<{ source: SnapshotSource; close(): Promise<void> }>): void {
  describe(`publish writes history before the manifest (${name})`, () => {
    let inner: SnapshotSource;
    let close: () => Promise<void>;
    beforeAll(async () => {
      ({ source: inner, close } = await open());
    });
    afterAll(() => close());

    it('history/<N>.json is the manifest, byte for byte, written after the object and before manifest.json', async () => {
      const source = new CrashingSource(inner);
      expect(await publishGeneration(source, 1, T0)).toBe(1);
      expect(source.writes).toEqual(['pemi/grid_stress/snapshots/00000001.arrow', history(1), MANIFEST]);
      expect(await text(inner, history(1))).toBe(await text(inner, MANIFEST));
      expect(await publishGeneration(source, 2, T0 + 1000)).toBe(2);
      // Each generation keeps its own, unchanged.
      expect(JSON.parse(await text(inner, history(1))).generation).toBe(1);
      expect(await text(inner, history(2))).toBe(await text(inner, MANIFEST));
    });

    it('a publish killed between the history and the manifest leaves the source serving the previous generation; the next publish completes', async () => {
      const source = new CrashingSource(inner);
      const before = await text(inner, MANIFEST);
      source.crash = true;
      await expect(publishGeneration(source, 3, T0 + 2000)).rejects.toThrow(/killed before the manifest write/);
      expect(source.writes).toEqual(['pemi/grid_stress/snapshots/00000003.arrow', history(3)]);
      expect(await text(inner, MANIFEST)).toBe(before);
      const s = await serve(inner, { clock: new ManualClock(T0) });
      try {
        const r = await s.get('/pemi/grid_stress?latest=false&limit=100');
        expect(r.body.metadata.generation).toBe(2);
        expect(r.body.data.map((x: { value: number }) => x.value)).toEqual(expectedValues(2));
        // The orphan history manifest is not served: manifest.json never named it.
        expectError(await s.get('/pemi/grid_stress?generation=3'), 400, 'generation_unavailable', 'generation');
        expect((await s.get('/pemi/grid_stress?generation=1&latest=false&limit=100')).body.data.map((x: { value: number }) => x.value)).toEqual(
          expectedValues(1),
        );
        // The publisher runs again (later, so its manifest differs): the leftover is replaced and the generation served.
        source.crash = false;
        expect(await publishGeneration(source, 3, T0 + 60_000)).toBe(3);
        expect(await text(inner, history(3))).toBe(await text(inner, MANIFEST));
        await s.refresh();
        expect((await s.get('/pemi/grid_stress?generation=3&latest=false&limit=100')).body.data.map((x: { value: number }) => x.value)).toEqual(
          expectedValues(3),
        );
      } finally {
        await s.close();
      }
    });
  });
}

suite('local folder', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pitcache-history-'));
  return { source: new LocalSource(dir), close: () => rm(dir, { recursive: true, force: true }) };
});

suite('S3', async () => {
  const server: TestS3 = await startS3rver();
  return { source: new S3Source(`s3://${server.bucket}/history`, { client: server.client, conditionalWrites: 'unsupported' }), close: () => server.close() };
});
