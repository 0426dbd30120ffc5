import { Type, type Data, type DataType, type Field } from 'apache-arrow';
import type { ArrowArray, ArrowPassthrough, ArrowTypeScalar, ArrowTypeSpec } from '../format/arrow-passthrough.js';
import { badEvents } from './event-batch.js';
import { concatBits, concatFixed, concatOffsets, rebaseIndices } from './arrow-buffers.js';

/**
 * An Arrow event column as the answer passes it through (contract 15: "Arrow columns in
 * their type"; format/arrow-passthrough.ts): its type as the schema's flatbuffer holds it and
 * its buffers as the body held them. A body of one record batch is passed as views of the
 * body (nothing copied, nothing decoded); several batches are concatenated buffer by
 * buffer. Any flat type passes (every Int and Float width, Bool, Utf8 and Binary and their
 * Large forms, FixedSizeBinary, Decimal, Date, Time, Timestamp of any unit and zone,
 * Duration, Interval, Null) and a dictionary of any of them with any index type; nested
 * types (List, Struct, Map, Union) are a 400.
 */
export function arrowPassthrough(field: Field, chunks: readonly Data[], rows: number): ArrowPassthrough {
  const type = field.type as DataType;
  if (type.typeId !== Type.Dictionary) {
    const spec = typeSpec(type, field.name);
    return { type: spec, array: arrayOf(type, chunks, rows), dictionary: null, signature: signatureOf(spec, null) };
  }
  const t = type as unknown as { dictionary: DataType; indices: { bitWidth: number; isSigned: boolean }; isOrdered: boolean };
  const spec = typeSpec(t.dictionary, field.name);
  const { indices, values } = dictionaryOf(t.dictionary, chunks, rows, t.indices);
  const dictionary = { indexBits: t.indices.bitWidth, indexSigned: t.indices.isSigned, ordered: t.isOrdered, values };
  return { type: spec, array: indices, dictionary, signature: signatureOf(spec, dictionary) };
}

function signatureOf(spec: ArrowTypeSpec, dict: { indexBits: number; indexSigned: boolean; ordered: boolean } | null): string {
  const scalars = spec.scalars.map((s) => `${s.id}=${s.value}`).join(',');
  const index = dict === null ? '' : `/dict${dict.indexSigned ? 'i' : 'u'}${dict.indexBits}${dict.ordered ? 'o' : ''}`;
  return `arrow${spec.tag}(${scalars};${spec.timezone ?? ''})${index}`;
}

const i16 = (id: number, value: number): ArrowTypeScalar => ({ id, kind: 'i16', value });
const i32 = (id: number, value: number): ArrowTypeScalar => ({ id, kind: 'i32', value });
const u8 = (id: number, value: boolean): ArrowTypeScalar => ({ id, kind: 'u8', value: value ? 1 : 0 });

/** The type's Schema.fbs table (apache-arrow's Type ids are the union's tags, its unit and precision enums the schema's). */
function typeSpec(type: DataType, name: string): ArrowTypeSpec {
  const t = type as unknown as Record<string, number | boolean | string | null | undefined>;
  const spec = (scalars: ArrowTypeScalar[], timezone: string | null = null): ArrowTypeSpec => ({ tag: type.typeId, scalars, timezone });
  switch (type.typeId) {
    case Type.Null:
    case Type.Binary:
    case Type.Utf8:
    case Type.Bool:
    case Type.LargeBinary:
    case Type.LargeUtf8:
      return spec([]);
    case Type.Int:
      return spec([i32(0, t.bitWidth as number), u8(1, t.isSigned as boolean)]);
    case Type.Float:
      return spec([i16(0, t.precision as number)]);
    case Type.Decimal:
      return spec([i32(0, t.precision as number), i32(1, t.scale as number), i32(2, t.bitWidth as number)]);
    case Type.Date:
    case Type.Interval:
    case Type.Duration:
      return spec([i16(0, t.unit as number)]);
    case Type.Time:
      return spec([i16(0, t.unit as number), i32(1, t.bitWidth as number)]);
    case Type.Timestamp:
      return spec([i16(0, t.unit as number)], (t.timezone as string | null | undefined) ?? null);
    case Type.FixedSizeBinary:
      return spec([i32(0, t.byteWidth as number)]);
    default:
      throw badEvents(`column "${name}": Arrow type ${String(type)} cannot be passed through (only flat types and dictionaries of them)`);
  }
}

/** The validity buffer: empty without nulls, the body's bitmap for one batch, else the batches' bits joined. */
function validityOf(chunks: readonly Data[], rows: number): { nullCount: number; bitmap: Uint8Array } {
  let nullCount = 0;
  for (const d of chunks) nullCount += d.nullCount;
  if (nullCount === 0) return { nullCount, bitmap: new Uint8Array(0) };
  return { nullCount, bitmap: concatBits(chunks, rows, (d) => (d.nullCount > 0 ? (d.nullBitmap ?? null) : null)) };
}

/** Bytes per value of a fixed-width type's values (a dictionary's: its indices'). */
function widthOf(d: Data): number {
  const values = d.values as unknown as ArrayLike<unknown> & { BYTES_PER_ELEMENT: number };
  return values.BYTES_PER_ELEMENT * d.stride;
}

function arrayOf(type: DataType, chunks: readonly Data[], rows: number): ArrowArray {
  if (type.typeId === Type.Null) return { length: rows, nullCount: rows, buffers: [] };
  const { nullCount, bitmap } = validityOf(chunks, rows);
  const buffers: Uint8Array[] = [bitmap];
  switch (type.typeId) {
    case Type.Bool:
      buffers.push(concatBits(chunks, rows, (d) => d.values as Uint8Array));
      break;
    case Type.Utf8:
    case Type.Binary:
      buffers.push(...concatOffsets(chunks, rows, 4));
      break;
    case Type.LargeUtf8:
    case Type.LargeBinary:
      buffers.push(...concatOffsets(chunks, rows, 8));
      break;
    default:
      buffers.push(concatFixed(chunks, rows, chunks.length === 0 ? 0 : widthOf(chunks[0]!)));
  }
  return { length: rows, nullCount, buffers };
}

/**
 * A dictionary column's indices and values. Batches that share one dictionary (or whose
 * dictionaries grew by deltas, each a prefix of the last) keep their indices; batches with
 * replaced dictionaries get the dictionaries one after the other and their indices moved by
 * what came before (a 400 if that overflows the index type).
 */
function dictionaryOf(
  valueType: DataType,
  chunks: readonly Data[],
  rows: number,
  index: { bitWidth: number; isSigned: boolean },
): { indices: ArrowArray; values: ArrowArray } {
  const { nullCount, bitmap } = validityOf(chunks, rows);
  const width = index.bitWidth / 8;
  const dicts = chunks.map((d) => d.dictionary!);
  const last = dicts[dicts.length - 1];
  const dataOf = (v: (typeof dicts)[number] | undefined): readonly Data[] => (v === undefined ? [] : (v.data as Data[]));
  const prefixOfLast = dicts.every((v) => v === last || dataOf(v).every((d, i) => dataOf(last)[i] === d));
  let values: ArrowArray;
  let indexBytes: Uint8Array;
  if (prefixOfLast) {
    values = arrayOf(valueType, dataOf(last), last?.length ?? 0);
    indexBytes = concatFixed(chunks, rows, width);
  } else {
    const all = dicts.flatMap((v) => dataOf(v));
    const total = dicts.reduce((n, v) => n + v.length, 0);
    if (total - 1 > (index.isSigned ? 2 ** (index.bitWidth - 1) - 1 : 2 ** index.bitWidth - 1))
      throw badEvents(`a dictionary column's batches hold ${total} values in all: more than its index type can address`);
    values = arrayOf(valueType, all, total);
    indexBytes = rebaseIndices(
      chunks,
      rows,
      width,
      dicts.map((v) => v.length),
    );
  }
  return { indices: { length: rows, nullCount, buffers: [bitmap, indexBytes] }, values };
}
