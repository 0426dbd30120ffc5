/**
 * Contract 15, "Arrow columns in their type": an Arrow body answered in Arrow carries every
 * event column back as it was sent, whatever its flat type (every Int and Float width, Bool,
 * Utf8, LargeUtf8, Binary, FixedSizeBinary, Decimal, Date32/Date64, Time, Timestamp of each
 * unit and zone, Duration, Null) and a dictionary of any of them with any index type, nulls
 * included; read back with apache-arrow and with polars (nodejs-polars), types and values
 * equal to the events sent. A body of several record batches (dictionaries shared or
 * replaced between them) comes back as one batch of the same values. Series-key columns
 * given as a dictionary still join, and come back as that dictionary.
 */
import type { RecordBatch } from 'apache-arrow';
import {
  Binary,
  Bool,
  DateDay,
  DateMillisecond,
  Decimal,
  Dictionary,
  DurationMillisecond,
  FixedSizeBinary,
  Float16,
  Float32,
  Float64,
  Int16,
  Int32,
  Int64,
  Int8,
  LargeUtf8,
  List,
  Field,
  Null,
  Table,
  TimeMicrosecond,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  Uint16,
  Uint32,
  Uint64,
  Uint8,
  Utf8,
  makeData,
  makeVector,
  tableFromIPC,
  tableToIPC,
  vectorFromArray,
  type DataType,
  type Vector,
} from 'apache-arrow';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from './support/fixtures.js';
import { TEST_KEY, type Harness } from './support/harness.js';
import { JOIN, joinPost, startJoinHarness } from './support/asof-join-harness.js';

const ARROW = 'application/vnd.apache.arrow.stream';
const N = 11; // not a multiple of 8: validity and Bool bitmaps end mid-byte

const pick = <T>(values: readonly T[]): (T | null)[] => Array.from({ length: N }, (_, i) => (i % 4 === 3 ? null : values[i % values.length]!));
const at = (): Vector =>
  vectorFromArray(
    Array.from({ length: N }, (_, i) => new Date(Date.UTC(2026, 1, 2 + (i % 3), 12))),
    new TimestampMillisecond(),
  );
const country = (): Vector =>
  vectorFromArray(
    Array.from({ length: N }, (_, i) => ['DE', 'FR', 'XX'][i % 3]!),
    new Utf8(),
  );

/** Every flat type an event column may have, each with nulls. */
function passthroughColumns(): Record<string, Vector> {
  const decimals = new Uint32Array(4 * N);
  for (let i = 0; i < N; i++) decimals[4 * i] = 1000 + i;
  return {
    i8: vectorFromArray(pick([-128, 0, 127]), new Int8()),
    i16: vectorFromArray(pick([-32768, 1, 32767]), new Int16()),
    i32: vectorFromArray(pick([-(2 ** 31), 2, 2 ** 31 - 1]), new Int32()),
    i64: vectorFromArray(pick([-(2n ** 63n), 3n, 2n ** 63n - 1n]), new Int64()),
    u8: vectorFromArray(pick([0, 255]), new Uint8()),
    u16: vectorFromArray(pick([0, 65535]), new Uint16()),
    u32: vectorFromArray(pick([0, 2 ** 32 - 1]), new Uint32()),
    u64: vectorFromArray(pick([0n, 2n ** 64n - 1n]), new Uint64()),
    f16: vectorFromArray(pick([1.5, -2, 65504]), new Float16()),
    f32: vectorFromArray(pick([1.25, -3.5]), new Float32()),
    f64: vectorFromArray(pick([Math.PI, -0, 1e300]), new Float64()),
    ok: vectorFromArray(pick([true, false, false]), new Bool()),
    text: vectorFromArray(pick(['a', '', 'héllo ✓']), new Utf8()),
    large: vectorFromArray(pick(['big', 'larger text']), new LargeUtf8()),
    bin: vectorFromArray(pick([new Uint8Array([1, 2, 3]), new Uint8Array(0)]), new Binary()),
    fixed: vectorFromArray(pick([new Uint8Array([9, 8]), new Uint8Array([7, 6])]), new FixedSizeBinary(2)),
    dec: makeVector(makeData({ type: new Decimal(2, 12, 128), length: N, nullCount: 0, data: decimals })),
    day: vectorFromArray(pick([new Date(Date.UTC(2026, 0, 1)), new Date(Date.UTC(1969, 11, 31))]), new DateDay()),
    day64: vectorFromArray(pick([new Date(Date.UTC(2026, 0, 1)), new Date(Date.UTC(2000, 1, 29))]), new DateMillisecond()),
    time: vectorFromArray(pick([1n, 86_399_999_999n]), new TimeMicrosecond()),
    ts_s: vectorFromArray(pick([new Date(Date.UTC(2026, 0, 1))]), new TimestampSecond()),
    ts_ms_ny: vectorFromArray(pick([new Date(Date.UTC(2026, 0, 1, 5))]), new TimestampMillisecond('America/New_York')),
    ts_us: vectorFromArray(pick([new Date(Date.UTC(1900, 0, 1))]), new TimestampMicrosecond('UTC')),
    ts_ns: vectorFromArray(pick([1_700_000_000_000]), new TimestampNanosecond('Asia/Kolkata')),
    dur: vectorFromArray(pick([5n, -7n]), new DurationMillisecond()),
    nothing: vectorFromArray(
      Array.from({ length: N }, () => null),
      new Null(),
    ),
    cat8: vectorFromArray(pick(['x', 'y', 'z']), new Dictionary(new Utf8(), new Int8())),
    cat32u: vectorFromArray(pick(['p', 'q']), new Dictionary(new Utf8(), new Uint32())),
    // apache-arrow's builder has no 64-bit indices: the column is made from its buffers
    cat64: makeVector(
      makeData({
        // apache-arrow's types allow Int8..Int32 indices; the format and its reader allow Int64
        type: new Dictionary(new Utf8(), new Int64() as unknown as Int32),
        length: N,
        nullCount: 0,
        data: BigInt64Array.from({ length: N }, (_, i) => BigInt(i % 2)) as unknown as Int32Array,
        dictionary: vectorFromArray(['long', 'longer'], new Utf8()),
      }),
    ),
    catnum: vectorFromArray(pick([10, 20]), new Dictionary(new Int32(), new Int16())),
  };
}

/** A value as compared: bytes and BigInts as text, so isDeepStrictEqual and toEqual see them. */
function cell(v: unknown): unknown {
  if (typeof v === 'bigint') return `${v}n`;
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number>);
  if (v instanceof Date) return v.getTime();
  return v;
}
function cells(v: Vector | null): unknown[] {
  if (v === null) return [];
  if (v.type instanceof Dictionary && v.type.indices.bitWidth === 64) {
    // apache-arrow's get cannot index a dictionary by a BigInt: each chunk's indices read by hand
    return v.data.flatMap((d) =>
      Array.from({ length: d.length }, (_, i) => (d.getValid(i) ? cell(d.dictionary!.get(Number((d.values as BigInt64Array)[d.offset + i]))) : null)),
    );
  }
  return Array.from({ length: v.length }, (_, i) => cell(v.get(i)));
}

/** Field type as apache-arrow prints it, a dictionary's with its index type and ordering. */
const typeText = (t: DataType): string => (t instanceof Dictionary ? `${String(t)}/${String(t.indices)}/${t.isOrdered}` : String(t));

describe('contract 15: Arrow event columns come back in their type', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startJoinHarness();
  });
  afterAll(() => h.close());
  const post = (...args: Parameters<ReturnType<typeof joinPost>>) => joinPost(h)(...args);

  /** The answer's bytes (the harness's replies are text). */
  async function postBytes(body: Uint8Array, query: string): Promise<Uint8Array> {
    const r = await fetch(`${h.url}${JOIN}?${query}`, { method: 'POST', body, headers: { 'x-api-key': TEST_KEY, 'content-type': ARROW } });
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect(r.status, Buffer.from(bytes).toString()).toBe(200);
    return bytes;
  }

  async function joinArrow(events: Table, query = 'columns=tag&format=arrow'): Promise<Table> {
    return tableFromIPC(await postBytes(tableToIPC(events, 'stream'), query));
  }

  function expectSame(sent: Table, got: Table, skip: readonly string[] = ['at']): void {
    for (const f of sent.schema.fields) {
      if (skip.includes(f.name)) continue;
      const back = got.schema.fields.find((g) => g.name === f.name);
      expect(back, f.name).toBeDefined();
      expect(typeText(back!.type), f.name).toBe(typeText(f.type));
      expect(cells(got.getChild(f.name)), f.name).toEqual(cells(sent.getChild(f.name)));
    }
  }

  it('every flat type and dictionaries: the same type and values, read by apache-arrow and polars; the join as with Utf8 keys', async () => {
    const events = new Table({ at: at(), country: country(), ...passthroughColumns() });
    const got = await joinArrow(events);
    expect(got.schema.fields.map((f) => f.name)).toEqual([...events.schema.fields.map((f) => f.name), 'date', 'tag', 'floor_applied']);
    expect(String(got.schema.fields[0]!.type)).toBe('Timestamp<MICROSECOND, UTC>');
    expectSame(events, got);
    // the dataset's columns: those of the JSON answer to the same events sent as CSV
    const csv = `at,country\n${Array.from({ length: N }, (_, i) => `${new Date(Date.UTC(2026, 1, 2 + (i % 3), 12)).toISOString()},${['DE', 'FR', 'XX'][i % 3]}`).join('\n')}\n`;
    const json = await post(csv, 'text/csv', 'columns=tag');
    expect(cells(got.getChild('tag'))).toEqual(json.body.data.map((r: { tag: string | null }) => r.tag));
    expect(cells(got.getChild('floor_applied'))).toEqual(json.body.data.map((r: { floor_applied: boolean }) => r.floor_applied));

    // polars reads the answer as it reads the events: the same dtypes and values, compared
    // by polars itself (nodejs-polars has no JS values for Float16 and Binary)
    const sentDf = pl.readIPCStream(Buffer.from(tableToIPC(events, 'stream')));
    const gotDf = pl.readIPCStream(Buffer.from(await postBytes(tableToIPC(events, 'stream'), 'columns=tag&format=arrow')));
    const names = sentDf.columns.filter((n) => n !== 'at');
    expect(gotDf.columns).toEqual([...sentDf.columns, 'date', 'tag', 'floor_applied']);
    // frameEqual compares values, not dtypes; a column's empty frame printed shows its dtype
    expect(gotDf.select(...names).frameEqual(sentDf.select(...names), true)).toBe(true);
    for (const name of names) expect(gotDf.select(name).head(0).toString(), name).toBe(sentDf.select(name).head(0).toString());
  });

  it('series-key columns as dictionaries (Int8, Uint16 indices) or LargeUtf8 (polars) join as Utf8 ones and come back as sent, in every answer format', async () => {
    const names = Array.from({ length: N }, (_, i) => ['DE', 'FR', 'XX'][i % 3]!);
    const utf8 = await joinArrow(new Table({ at: at(), country: vectorFromArray(names, new Utf8()) }), 'columns=tag&format=arrow');
    const utf8Json = (await post(tableToIPC(new Table({ at: at(), country: vectorFromArray(names, new Utf8()) }), 'stream'), ARROW, 'columns=tag')).body.data;
    for (const type of [new Dictionary(new Utf8(), new Int8()), new Dictionary(new Utf8(), new Uint16()), new LargeUtf8()]) {
      const events = new Table({ at: at(), country: vectorFromArray(names, type) });
      const got = await joinArrow(events, 'columns=tag&format=arrow');
      expect(typeText(got.schema.fields[1]!.type)).toBe(typeText(events.schema.fields[1]!.type));
      expect(cells(got.getChild('country'))).toEqual(names);
      for (const f of utf8.schema.fields.slice(2)) expect(cells(got.getChild(f.name)), `${String(type)} ${f.name}`).toEqual(cells(utf8.getChild(f.name)));
      const json = await post(tableToIPC(events, 'stream'), ARROW, 'columns=tag');
      expect(json.body.data, String(type)).toEqual(utf8Json);
    }
    expect(cells(utf8.getChild('tag')).filter((t) => t !== null).length).toBeGreaterThan(0);
    const missing = new Table({ at: at(), country: vectorFromArray([...names.slice(0, 4), null, ...names.slice(5)], new LargeUtf8()) });
    const r = await post(tableToIPC(missing, 'stream'), ARROW, 'format=arrow');
    expectError(r, 400, 'invalid_body', undefined);
    expect(r.body.error.message).toContain('row 4: column "country"');
  });

  it('a body of several record batches (lengths not multiples of 8, dictionaries shared or replaced): one batch of the same values', async () => {
    const dictType = new Dictionary(new Utf8(), new Int16());
    const shared = vectorFromArray(['s0', 's1', 's2'], new Utf8());
    // one type (one dictionary id) for the batches' own dictionaries: a replacement each batch
    const swappedType = new Dictionary(new Utf8(), new Int8());
    // the same for every index width: 16, 32 (unsigned) and 64 bits (made from its buffers: apache-arrow's builder has no 64-bit indices)
    const swapped16 = new Dictionary(new Utf8(), new Int16());
    const swapped32 = new Dictionary(new Utf8(), new Uint32());
    const swapped64 = new Dictionary(new Utf8(), new Int64() as unknown as Int32);
    const batch = (n: number, first: number, replaced: string[]): RecordBatch => {
      const rows = Array.from({ length: n }, (_, i) => first + i);
      const t = new Table({
        at: vectorFromArray(
          rows.map((r) => new Date(Date.UTC(2026, 1, 2 + (r % 3), 12))),
          new TimestampMillisecond(),
        ),
        country: vectorFromArray(
          rows.map((r) => ['DE', 'FR'][r % 2]!),
          new Utf8(),
        ),
        n: vectorFromArray(
          rows.map((r) => (r % 5 === 0 ? null : r)),
          new Int32(),
        ),
        ok: vectorFromArray(
          rows.map((r) => (r % 7 === 0 ? null : r % 3 === 0)),
          new Bool(),
        ),
        word: vectorFromArray(
          rows.map((r) => (r % 6 === 0 ? null : `w${r}`)),
          new Utf8(),
        ),
        big: vectorFromArray(
          rows.map((r) => `L${r}`),
          new LargeUtf8(),
        ),
        same: makeVector(
          makeData({
            type: dictType,
            length: n,
            nullCount: 0,
            data: Int16Array.from(rows, (r) => r % 3),
            dictionary: shared,
          }),
        ),
        swapped: vectorFromArray(
          rows.map((r) => replaced[r % replaced.length]!),
          swappedType,
        ),
        swapped16: vectorFromArray(
          rows.map((r) => `${replaced[r % replaced.length]!}16`),
          swapped16,
        ),
        swapped32: vectorFromArray(
          rows.map((r) => `${replaced[r % replaced.length]!}32`),
          swapped32,
        ),
        swapped64: makeVector(
          makeData({
            type: swapped64,
            length: n,
            nullCount: 0,
            data: BigInt64Array.from(rows, (r) => BigInt(r % replaced.length)) as unknown as Int32Array,
            dictionary: vectorFromArray(
              replaced.map((v) => `${v}64`),
              new Utf8(),
            ),
          }),
        ),
      });
      return t.batches[0]!;
    };
    const events = new Table([batch(5, 0, ['a', 'b']), batch(6, 5, ['c', 'd', 'e']), batch(3, 11, ['f'])]);
    expect(events.batches.length).toBe(3);
    const got = await joinArrow(events);
    expect(got.numRows).toBe(14);
    expectSame(events, got);
  });

  it('no events: the schema alone, each passthrough column in its type (a dictionary with no dictionary batch), read by apache-arrow and polars', async () => {
    const events = new Table({
      at: at(),
      country: country(),
      cat: vectorFromArray(pick(['x', 'y']), new Dictionary(new Utf8(), new Int8())),
      u: vectorFromArray(pick([1n]), new Uint64()),
    }).slice(0, 0);
    expect(events.numRows).toBe(0);
    const bytes = await postBytes(tableToIPC(events, 'stream'), 'format=arrow');
    const got = tableFromIPC(bytes);
    expect(got.numRows).toBe(0);
    expect(got.schema.fields.map((f) => typeText(f.type)).slice(1, 4)).toEqual(events.schema.fields.slice(1).map((f) => typeText(f.type)));
    expect(pl.readIPCStream(Buffer.from(bytes)).height).toBe(0);
  });

  it('a nested type is a 400 naming the column; a type beyond contract 6 answered in JSON or CSV is a 400 that names format=arrow', async () => {
    const nested = new Table({
      at: at(),
      country: country(),
      list: vectorFromArray(
        Array.from({ length: N }, () => [1, 2]),
        new List(new Field('item', new Int32(), true)),
      ),
    });
    const r = await post(tableToIPC(nested, 'stream'), ARROW, 'format=arrow');
    expectError(r, 400, 'invalid_body', undefined);
    expect(r.body.error.message).toContain('column "list"');
    // LargeUtf8 (polars' strings) is read in every answer format, nulls kept
    const large = tableToIPC(new Table({ at: at(), country: country(), note: vectorFromArray(pick(['n1', 'n2']), new LargeUtf8()) }), 'stream');
    for (const format of ['json', 'csv']) expect((await post(large, ARROW, `format=${format}`)).status, format).toBe(200);
    expect((await post(large, ARROW, 'format=json')).body.data.map((r: { note: string | null }) => r.note)).toEqual(pick(['n1', 'n2']));
    const half = tableToIPC(new Table({ at: at(), country: country(), f16: vectorFromArray(pick([1.5]), new Float16()) }), 'stream');
    for (const format of ['json', 'csv']) {
      const bad = await post(half, ARROW, `format=${format}`);
      expectError(bad, 400, 'invalid_body', undefined);
      expect(bad.body.error.message).toContain('"f16"');
      expect(bad.body.error.message).toContain('format=arrow');
    }
    const ok = await joinArrow(new Table({ at: at(), country: country(), f16: vectorFromArray(pick([1.5]), new Float16()) }));
    expect(String(ok.schema.fields[2]!.type)).toBe('Float16');
  });
});
