import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SnapshotSource } from '../../src/source/snapshot-source.js';
import { PreconditionFailedError } from '../../src/source/snapshot-source.js';
import { buildArrowSnapshot } from '../../src/snapshot/arrow-writer.js';
import type { SnapshotSpec } from '../../src/snapshot/arrow-writer.js';
import { manifestPath, objectPath, parseManifest, partsOf } from '../../src/snapshot/manifest.js';
import { countArrowRows, writeGeneration } from '../../src/snapshot/write-generation.js';

/**
 * The one behaviour every SnapshotSource owes the loader and the publisher, run against
 * each implementation (a local folder, S3 through s3rver) so that they cannot drift apart.
 */
export interface SourceUnderTest {
  readonly source: SnapshotSource;
  cleanup(): Promise<void>;
}

export interface ContractOptions {
  /**
   * How conditional writes are honoured: `atomic` (the write reports enforced: true) or
   * `emulated` (a check before the put; the write reports enforced: false). Shown in the
   * test names so a reader knows what was proven.
   */
  readonly conditionalWrites: 'atomic' | 'emulated';
}

const text = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Deterministic, incompressible-looking bytes: a wrong offset anywhere changes them. */
export function patternBytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

function tinySnapshot(): SnapshotSpec {
  const day = 20_000;
  const us = BigInt(day) * 86_400_000_000n;
  return {
    seriesKey: ['country'],
    columns: [
      { name: 'date', type: 'date32', values: [day, day] },
      { name: 'str_effective_at', type: 'date32', values: [day, day] },
      { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: [us, us + 1n] },
      { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: [us, us + 1n] },
      { name: 'model_version', type: 'utf8', values: ['1.0', '1.0'] },
      { name: 'country', type: 'utf8', values: ['DE', 'FR'] },
      { name: 'value', type: 'float64', values: [1.5, null] },
    ],
  };
}

export function describeSnapshotSourceContract(name: string, makeSource: () => Promise<SourceUnderTest>, options: ContractOptions): void {
  describe(`SnapshotSource contract: ${name}`, () => {
    let under: SourceUnderTest;
    let source: SnapshotSource;
    beforeEach(async () => {
      under = await makeSource();
      source = under.source;
    });
    afterEach(async () => {
      await under.cleanup();
    });

    it('lists exactly the <product>/<dataset> folders that hold a manifest.json', async () => {
      expect(await source.listDatasets()).toEqual([]);
      for (const path of [
        'pemi/grid_stress/manifest.json',
        'pemi/grid_stress/snapshots/00000001.arrow',
        'gbsi_eu/system_stress/manifest.json',
        'glmi/no_manifest/snapshots/00000001.arrow',
        'toplevel/manifest.json',
        'wrsi/deep/nested/manifest.json',
        'wrsi/near/manifest.json.tmp',
      ]) {
        await source.writeObject(path, text('{}'));
      }
      expect(await source.listDatasets()).toEqual([
        { productId: 'gbsi_eu', dataset: 'system_stress' },
        { productId: 'pemi', dataset: 'grid_stress' },
      ]);
    });

    it('readIfChanged: ok with bytes and an etag, unchanged for that etag, ok again after a change', async () => {
      const path = 'pemi/grid_stress/manifest.json';
      await source.writeObject(path, text('{"generation":1}'));
      const first = await source.readIfChanged(path, null);
      if (first.status !== 'ok') throw new Error(`expected ok, got ${first.status}`);
      expect(new TextDecoder().decode(first.bytes)).toBe('{"generation":1}');
      expect(first.etag.length).toBeGreaterThan(0);

      expect(await source.readIfChanged(path, first.etag)).toEqual({ status: 'unchanged' });

      await source.writeObject(path, text('{"generation":2}'));
      const second = await source.readIfChanged(path, first.etag);
      if (second.status !== 'ok') throw new Error(`expected ok, got ${second.status}`);
      expect(new TextDecoder().decode(second.bytes)).toBe('{"generation":2}');
      expect(second.etag).not.toBe(first.etag);
    });

    it('readIfChanged: missing for an absent object, with or without an etag', async () => {
      expect(await source.readIfChanged('pemi/absent/manifest.json', null)).toEqual({ status: 'missing' });
      expect(await source.readIfChanged('pemi/absent/manifest.json', '"0123"')).toEqual({ status: 'missing' });
    });

    it('readObject returns the exact bytes of a multi-MB object, a small one and an empty one', async () => {
      const big = patternBytes(5 * 1024 * 1024 + 7);
      const cases: Array<[string, Uint8Array]> = [
        ['p/d/snapshots/big.arrow', big],
        ['p/d/snapshots/small.arrow', patternBytes(10, 2)],
        ['p/d/snapshots/empty.arrow', new Uint8Array(0)],
      ];
      for (const [path, bytes] of cases) await source.writeObject(path, bytes);
      for (const [path, bytes] of cases) {
        const got = await source.readObject(path, bytes.byteLength);
        expect(got.byteLength, path).toBe(bytes.byteLength);
        expect(Buffer.from(got).equals(Buffer.from(bytes)), path).toBe(true);
      }
      // A wrong size hint is only a hint.
      expect(Buffer.from(await source.readObject('p/d/snapshots/small.arrow', 3)).equals(Buffer.from(cases[1]![1]))).toBe(true);
    });

    it('readObject of a missing object throws an error that names it', async () => {
      await expect(source.readObject('p/d/snapshots/absent.arrow')).rejects.toThrow(/absent\.arrow/);
    });

    it('writeObject replaces an object and reports the etag a read then sees', async () => {
      const path = 'p/d/manifest.json';
      await source.writeObject(path, text('one'));
      const written = await source.writeObject(path, text('two'));
      const read = await source.readIfChanged(path, null);
      if (read.status !== 'ok') throw new Error(`expected ok, got ${read.status}`);
      expect(new TextDecoder().decode(read.bytes)).toBe('two');
      expect(written.etag).toBe(read.etag);
      expect(written.enforced).toBe(false);
    });

    const mode = options.conditionalWrites === 'atomic' ? 'atomic' : 'emulated: the store ignores conditions, enforced: false';
    const enforced = options.conditionalWrites === 'atomic';

    it(`conditional write (${mode}): ifNoneMatch '*' creates a new object and refuses an existing one`, async () => {
      const path = 'p/d/manifest.json';
      const created = await source.writeObject(path, text('first'), { ifNoneMatch: '*' });
      expect(created.enforced).toBe(enforced);
      const refused = source.writeObject(path, text('second'), { ifNoneMatch: '*' });
      await expect(refused).rejects.toBeInstanceOf(PreconditionFailedError);
      await expect(refused).rejects.toThrow(/p\/d\/manifest\.json/);
      expect(new TextDecoder().decode(await source.readObject(path))).toBe('first');
    });

    it(`conditional write (${mode}): ifMatch succeeds with the current etag and fails with a stale or absent one`, async () => {
      const path = 'p/d/manifest.json';
      await source.writeObject(path, text('v1'));
      const v1 = await source.readIfChanged(path, null);
      if (v1.status !== 'ok') throw new Error(`expected ok, got ${v1.status}`);

      const v2 = await source.writeObject(path, text('v2'), { ifMatch: v1.etag });
      expect(v2.enforced).toBe(enforced);
      expect(new TextDecoder().decode(await source.readObject(path))).toBe('v2');

      await expect(source.writeObject(path, text('v3 from a stale publisher'), { ifMatch: v1.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(new TextDecoder().decode(await source.readObject(path))).toBe('v2');

      await expect(source.writeObject('p/d/absent.json', text('x'), { ifMatch: v1.etag })).rejects.toBeInstanceOf(PreconditionFailedError);
      expect(await source.readIfChanged('p/d/absent.json', null)).toEqual({ status: 'missing' });
    });

    it('publishes a generation with writeGeneration that reads back whole and verified', async () => {
      const ref = { productId: 'gbsi_eu', dataset: 'system_stress' };
      const bytes = buildArrowSnapshot(tinySnapshot());
      const written = await writeGeneration(source, ref, bytes, 7, '2026-11-01T00:00:00Z');

      expect(await source.listDatasets()).toEqual([ref]);
      const read = await source.readIfChanged(manifestPath(ref.productId, ref.dataset), null);
      if (read.status !== 'ok') throw new Error(`expected ok, got ${read.status}`);
      const manifest = parseManifest(read.bytes);
      expect(manifest).toEqual(written);
      expect(manifest).toMatchObject({ product_id: 'gbsi_eu', dataset: 'system_stress', generation: 7, rows: 2, object: 'snapshots/00000007.arrow' });

      const [part] = partsOf(manifest);
      const object = await source.readObject(objectPath(ref.productId, ref.dataset, part!.object));
      expect(createHash('sha256').update(object).digest('hex')).toBe(part!.sha256);
      expect(countArrowRows(object)).toBe(2);
    });
  });
}
