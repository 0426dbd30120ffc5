import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataType, DateUnit, TimeUnit, tableFromIPC } from 'apache-arrow';
import type { Table, Vector } from 'apache-arrow';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalSource } from '../src/source/local-source.js';
import type { ConditionalRead, DatasetRef, SnapshotSource, WriteCondition, WriteResult } from '../src/source/snapshot-source.js';
import { SERIES_KEY_METADATA, buildArrowSnapshot } from '../src/snapshot/arrow-writer.js';
import type { ColumnSpec, SnapshotSpec } from '../src/snapshot/arrow-writer.js';
import { parseManifest } from '../src/snapshot/manifest.js';
import { countArrowRows, generationObjectName, writeGeneration } from '../src/snapshot/write-generation.js';

const FORMATS = ['file', 'stream'] as const;

/** One column of every type the writer offers, each with a null at row 2. */
function everyTypeSpec(): SnapshotSpec {
  const columns: ColumnSpec[] = [
    { name: 'date', type: 'date32', values: [19000, 19001, null, -1, 0] },
    { name: 'ts_s', type: 'timestamp', unit: 's', values: [1_700_000_000, 0, null, 1, 2n] },
    { name: 'ts_ms', type: 'timestamp', unit: 'ms', values: [1_700_000_000_123, -1, null, -(2 ** 40) - 3, 2] },
    { name: 'ts_us', type: 'timestamp', unit: 'us', values: [1_700_000_000_123_456, 0, null, 1, 2] },
    { name: 'ts_ns', type: 'timestamp', unit: 'ns', values: [1_700_000_000_123_456_789n, 0, null, 1, 2] },
    { name: 'key', type: 'utf8', values: ['DE', 'FR', null, 'é', ''] },
    { name: 'zone', type: 'dict-utf8', values: ['DE-LU', 'FR', null, 'DE-LU', 'NO2'] },
    { name: 'f64', type: 'float64', values: [1.5, Number.NaN, null, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY] },
    { name: 'f32', type: 'float32', values: [0.25, Number.NaN, null, Number.POSITIVE_INFINITY, -2] },
    { name: 'i8', type: 'int8', values: [-128, 127, null, 0, 1] },
    { name: 'i16', type: 'int16', values: [-32768, 32767, null, 0, 1] },
    { name: 'i32', type: 'int32', values: [-(2 ** 31), 2 ** 31 - 1, null, 0, 1] },
    { name: 'u8', type: 'uint8', values: [0, 255, null, 1, 2] },
    { name: 'u16', type: 'uint16', values: [0, 65535, null, 1, 2] },
    { name: 'u32', type: 'uint32', values: [0, 2 ** 32 - 1, null, 1, 2] },
    { name: 'i64', type: 'int64', values: [2n ** 62n, -(2 ** 53), null, 0, 7] },
    { name: 'flag', type: 'bool', values: [true, false, null, true, false] },
  ];
  return { columns, seriesKey: ['key', 'zone'], batchRows: 2 };
}

/** The raw stored values of a column across its batches (timestamps stay in their unit). */
function raw(v: Vector): unknown[] {
  const out: unknown[] = [];
  for (const d of v.data) {
    for (let i = 0; i < d.length; i++)
      out.push(
        d.getValid(i)
          ? DataType.isBool(d.type) || DataType.isUtf8(d.type) || DataType.isDictionary(d.type)
            ? v.get(out.length)
            : d.values[d.offset + i]
          : null,
      );
  }
  return out;
}

function child(t: Table, name: string): Vector {
  const c = t.getChild(name);
  if (c === null) throw new Error(`no column ${name}`);
  return c;
}

describe('buildArrowSnapshot', () => {
  for (const format of FORMATS) {
    it(`gives every column its Arrow type (${format})`, () => {
      const t = tableFromIPC(buildArrowSnapshot(everyTypeSpec(), format));
      const type = (n: string): DataType => child(t, n).type as DataType;
      const date = type('date');
      expect(DataType.isDate(date) && date.unit).toBe(DateUnit.DAY);
      const units = { ts_s: TimeUnit.SECOND, ts_ms: TimeUnit.MILLISECOND, ts_us: TimeUnit.MICROSECOND, ts_ns: TimeUnit.NANOSECOND };
      for (const [name, unit] of Object.entries(units)) {
        const ty = type(name);
        expect(DataType.isTimestamp(ty)).toBe(true);
        expect(ty).toMatchObject({ unit, timezone: 'UTC' });
      }
      expect(DataType.isUtf8(type('key'))).toBe(true);
      const dict = type('zone');
      if (!DataType.isDictionary(dict)) throw new Error('zone is not a dictionary');
      expect(DataType.isUtf8(dict.dictionary)).toBe(true);
      expect(dict.indices).toMatchObject({ bitWidth: 32, isSigned: true });
      expect(type('f64')).toMatchObject({ precision: 2 });
      expect(type('f32')).toMatchObject({ precision: 1 });
      const ints = { i8: [8, true], i16: [16, true], i32: [32, true], u8: [8, false], u16: [16, false], u32: [32, false], i64: [64, true] } as const;
      for (const [name, [bitWidth, isSigned]] of Object.entries(ints)) {
        expect(DataType.isInt(type(name))).toBe(true);
        expect(type(name)).toMatchObject({ bitWidth, isSigned });
      }
      expect(DataType.isBool(type('flag'))).toBe(true);
      expect(t.schema.fields.map((f) => f.name)).toEqual(everyTypeSpec().columns.map((c) => c.name));
    });

    it(`stores values exactly, NaN and infinities included (${format})`, () => {
      const t = tableFromIPC(buildArrowSnapshot(everyTypeSpec(), format));
      expect(raw(child(t, 'date'))).toEqual([19000, 19001, null, -1, 0]);
      expect(raw(child(t, 'ts_s'))).toEqual([1_700_000_000n, 0n, null, 1n, 2n]);
      expect(raw(child(t, 'ts_ms'))).toEqual([1_700_000_000_123n, -1n, null, -(2n ** 40n) - 3n, 2n]);
      expect(raw(child(t, 'ts_us'))).toEqual([1_700_000_000_123_456n, 0n, null, 1n, 2n]);
      expect(raw(child(t, 'ts_ns'))).toEqual([1_700_000_000_123_456_789n, 0n, null, 1n, 2n]);
      expect(raw(child(t, 'key'))).toEqual(['DE', 'FR', null, 'é', '']);
      expect(raw(child(t, 'zone'))).toEqual(['DE-LU', 'FR', null, 'DE-LU', 'NO2']);
      expect(raw(child(t, 'f64'))).toEqual([1.5, Number.NaN, null, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
      expect(raw(child(t, 'f32'))).toEqual([0.25, Number.NaN, null, Number.POSITIVE_INFINITY, -2]);
      expect(raw(child(t, 'i8'))).toEqual([-128, 127, null, 0, 1]);
      expect(raw(child(t, 'u32'))).toEqual([0, 2 ** 32 - 1, null, 1, 2]);
      expect(raw(child(t, 'i64'))).toEqual([2n ** 62n, -(2n ** 53n), null, 0n, 7n]);
      expect(raw(child(t, 'flag'))).toEqual([true, false, null, true, false]);
    });

    it(`marks a null by an unset validity bit in every type (${format})`, () => {
      const t = tableFromIPC(buildArrowSnapshot(everyTypeSpec(), format));
      for (const f of t.schema.fields) {
        const v = child(t, f.name);
        expect(v.nullCount, f.name).toBe(1);
        expect(
          [0, 1, 2, 3, 4].map((i) => v.isValid(i)),
          f.name,
        ).toEqual([true, true, false, true, true]);
      }
    });

    it(`writes the series key as JSON schema metadata, extra metadata after it (${format})`, () => {
      const spec = { ...everyTypeSpec(), metadata: { 'pitcache.note': 'x' } };
      const t = tableFromIPC(buildArrowSnapshot(spec, format));
      expect(JSON.parse(t.schema.metadata.get(SERIES_KEY_METADATA)!)).toEqual(['key', 'zone']);
      expect(t.schema.metadata.get('pitcache.note')).toBe('x');
      const broken = tableFromIPC(buildArrowSnapshot({ ...spec, metadata: { [SERIES_KEY_METADATA]: 'not json' } }, format));
      expect(broken.schema.metadata.get(SERIES_KEY_METADATA)).toBe('not json');
    });

    it(`splits rows into record batches of batchRows (${format})`, () => {
      const n = 10;
      const spec = (batchRows?: number): SnapshotSpec => ({
        seriesKey: [],
        batchRows,
        columns: [{ name: 'x', type: 'int32', values: Array.from({ length: n }, (_, i) => i) }],
      });
      expect(tableFromIPC(buildArrowSnapshot(spec(), format)).batches.map((b) => b.numRows)).toEqual([10]);
      const t = tableFromIPC(buildArrowSnapshot(spec(4), format));
      expect(t.batches.map((b) => b.numRows)).toEqual([4, 4, 2]);
      expect(raw(child(t, 'x'))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    });

    it(`shares one dictionary across all batches of a dictionary column (${format})`, () => {
      const values = ['b', 'a', 'b', 'c', 'a', 'a', null, 'c'];
      const t = tableFromIPC(buildArrowSnapshot({ seriesKey: ['k'], batchRows: 3, columns: [{ name: 'k', type: 'dict-utf8', values }] }, format));
      const k = child(t, 'k');
      expect(k.data.length).toBe(3);
      const dictionaries = new Set(k.data.map((d) => d.dictionary));
      expect(dictionaries.size).toBe(1);
      expect([...dictionaries][0]!.toArray()).toEqual(['b', 'a', 'c']);
      expect(k.toArray()).toEqual(values);
    });
  }

  it('writes the file format with its magic and the stream format without', () => {
    const file = buildArrowSnapshot(everyTypeSpec(), 'file');
    const stream = buildArrowSnapshot(everyTypeSpec(), 'stream');
    expect(Buffer.from(file.subarray(0, 6)).toString('latin1')).toBe('ARROW1');
    expect(Buffer.from(file.subarray(-6)).toString('latin1')).toBe('ARROW1');
    expect(Array.from(stream.subarray(0, 4))).toEqual([0xff, 0xff, 0xff, 0xff]);
  });

  it('gives identical bytes for identical input', () => {
    for (const format of FORMATS) {
      expect(Buffer.from(buildArrowSnapshot(everyTypeSpec(), format)).equals(Buffer.from(buildArrowSnapshot(everyTypeSpec(), format)))).toBe(true);
    }
  });

  it('writes an empty snapshot with its schema and no rows', () => {
    const spec: SnapshotSpec = {
      seriesKey: ['k'],
      columns: [
        { name: 'k', type: 'dict-utf8', values: [] },
        { name: 'v', type: 'float64', values: [] },
      ],
    };
    const t = tableFromIPC(buildArrowSnapshot(spec));
    expect(t.numRows).toBe(0);
    expect(t.schema.fields.map((f) => f.name)).toEqual(['k', 'v']);
  });

  it('refuses columns of unequal length, duplicate names, and values that do not fit the type', () => {
    const two = [1, 2];
    expect(() =>
      buildArrowSnapshot({
        seriesKey: [],
        columns: [
          { name: 'a', type: 'int32', values: two },
          { name: 'b', type: 'int32', values: [1] },
        ],
      }),
    ).toThrow(/b has 1 values, expected 2/);
    expect(() =>
      buildArrowSnapshot({
        seriesKey: [],
        columns: [
          { name: 'a', type: 'int32', values: two },
          { name: 'a', type: 'int32', values: two },
        ],
      }),
    ).toThrow(/duplicate column name: a/);
    expect(() => buildArrowSnapshot({ seriesKey: [], columns: [{ name: 'a', type: 'int8', values: [200] }] })).toThrow(/not an integer in \[-128, 127\]/);
    expect(() => buildArrowSnapshot({ seriesKey: [], columns: [{ name: 'a', type: 'int32', values: [1.5] }] })).toThrow(/not an integer/);
    expect(() => buildArrowSnapshot({ seriesKey: [], columns: [{ name: 't', type: 'timestamp', unit: 'us', values: [1.5] }] })).toThrow(
      /t: 1.5 is not an integer/,
    );
    expect(() => buildArrowSnapshot({ seriesKey: [], columns: [{ name: 'i', type: 'int64', values: [2n ** 63n] }] })).toThrow(/does not fit in 64 bits/);
    expect(() => buildArrowSnapshot({ seriesKey: [], batchRows: 0, columns: [{ name: 'a', type: 'int32', values: two }] })).toThrow(/batchRows/);
  });
});

/** Records the order of writes, over a real local folder. */
class RecordingSource implements SnapshotSource {
  readonly writes: string[] = [];
  constructor(private readonly inner: LocalSource) {}
  get description(): string {
    return this.inner.description;
  }
  listDatasets(): Promise<DatasetRef[]> {
    return this.inner.listDatasets();
  }
  readIfChanged(path: string, etag: string | null): Promise<ConditionalRead> {
    return this.inner.readIfChanged(path, etag);
  }
  readObject(path: string): Promise<Uint8Array> {
    return this.inner.readObject(path);
  }
  writeObject(path: string, bytes: Uint8Array, condition?: WriteCondition): Promise<WriteResult> {
    this.writes.push(path);
    return this.inner.writeObject(path, bytes, condition);
  }
}

describe('writeGeneration', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'pitcache-writer-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  for (const format of FORMATS) {
    it(`writes the padded object first, its history manifest next and a valid manifest of it last (${format})`, async () => {
      const bytes = buildArrowSnapshot({ ...everyTypeSpec(), batchRows: 2 }, format);
      const source = new RecordingSource(new LocalSource(dir));
      const m = await writeGeneration(source, { productId: 'pemi', dataset: 'grid_stress' }, bytes, 7, '2026-11-20T23:30:00Z');
      expect(source.writes).toEqual(['pemi/grid_stress/snapshots/00000007.arrow', 'pemi/grid_stress/history/00000007.json', 'pemi/grid_stress/manifest.json']);
      // contract 12: the history manifest is the manifest, byte for byte.
      expect(await readFile(join(dir, 'pemi/grid_stress/history/00000007.json'))).toEqual(await readFile(join(dir, 'pemi/grid_stress/manifest.json')));
      const onDisk = parseManifest(await readFile(join(dir, 'pemi/grid_stress/manifest.json')));
      expect(onDisk).toEqual(m);
      expect(onDisk).toEqual({
        format: 'pitcache-snapshot/1',
        product_id: 'pemi',
        dataset: 'grid_stress',
        generation: 7,
        object: 'snapshots/00000007.arrow',
        sha256: createHash('sha256').update(bytes).digest('hex'),
        rows: 5,
        created_at: '2026-11-20T23:30:00Z',
      });
      expect(Buffer.from(await readFile(join(dir, 'pemi/grid_stress/snapshots/00000007.arrow'))).equals(Buffer.from(bytes))).toBe(true);
    });
  }

  it('counts rows over every record batch', () => {
    const spec: SnapshotSpec = { seriesKey: [], batchRows: 3, columns: [{ name: 'x', type: 'float64', values: new Array<number>(11).fill(1) }] };
    expect(countArrowRows(buildArrowSnapshot(spec, 'file'))).toBe(11);
    expect(countArrowRows(buildArrowSnapshot(spec, 'stream'))).toBe(11);
  });

  it('names generations with eight digits', () => {
    expect(generationObjectName(1)).toBe('snapshots/00000001.arrow');
    expect(generationObjectName(123456789)).toBe('snapshots/123456789.arrow');
  });

  it('refuses a created_at that is not RFC 3339 and bytes that are not Arrow, writing nothing', async () => {
    const source = new RecordingSource(new LocalSource(dir));
    const bytes = buildArrowSnapshot(everyTypeSpec());
    const ref = { productId: 'glmi', dataset: 'marginality' };
    await expect(writeGeneration(source, ref, bytes, 1, '2026-11-20')).rejects.toThrow(/RFC 3339/);
    await expect(writeGeneration(source, ref, new TextEncoder().encode('not arrow'), 1, '2026-11-20T00:00:00Z')).rejects.toThrow();
    await expect(writeGeneration(source, ref, bytes, -1, '2026-11-20T00:00:00Z')).rejects.toThrow();
    expect(source.writes).toEqual([]);
  });
});
