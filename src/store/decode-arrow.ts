import { DateUnit, Precision, TimeUnit as ArrowTimeUnit, Type, tableFromIPC } from 'apache-arrow';
import type { Data, DataType, Field, Table as ArrowTable } from 'apache-arrow';
import type { Column, IntArray, StringColumn, TimeUnit } from './column.js';

/**
 * Arrow IPC bytes (file or stream format) -> plain typed-array columns in snapshot order,
 * checked against contract 6. Strings come out as codes plus the list of distinct values;
 * the table builder turns those into dictionaries once the rows are sorted.
 *
 * Everything here runs once per generation. Each check names the column and the rule, so
 * an operator reading the log knows what to fix.
 */
export type DecodedColumn =
  | Exclude<Column, StringColumn>
  | { readonly kind: 'string'; readonly name: string; readonly validity: Uint8Array | null; readonly codes: Int32Array; readonly strings: string[] };

export interface DecodedSnapshot {
  readonly rows: number;
  readonly columns: DecodedColumn[];
  readonly seriesKey: string[];
}

export const SERIES_KEY_METADATA = 'pitcache.series_key';
const REQUIRED = ['date', 'str_effective_at', 'str_observed_at', 'str_ingested_at', 'model_version'] as const;

export function decodeArrowSnapshot(bytes: Uint8Array): DecodedSnapshot {
  let table: ArrowTable;
  try {
    table = tableFromIPC(bytes);
  } catch (e) {
    throw new Error(`not an Arrow IPC file or stream: ${(e as Error).message}`);
  }
  const fields = table.schema.fields;
  const names = new Set<string>();
  for (const f of fields) {
    if (names.has(f.name)) throw new Error(`column "${f.name}" appears twice`);
    names.add(f.name);
  }
  for (const r of REQUIRED) if (!names.has(r)) throw new Error(`required column "${r}" is missing`);
  const seriesKey = readSeriesKey(table.schema.metadata, fields);

  const rows = table.numRows;
  const columns = fields.map((field, i) => {
    const chunks = (table.getChildAt(i)?.data ?? []) as Data[];
    return decodeColumn(field, chunks, rows);
  });

  const byName = new Map(columns.map((c) => [c.name, c]));
  expectKind(byName.get('date')!, ['date32'], 'Date32');
  expectKind(byName.get('str_effective_at')!, ['timestamp', 'date32'], 'Timestamp (s, ms, us) or Date32');
  expectKind(byName.get('str_observed_at')!, ['timestamp'], 'Timestamp (s, ms, us)');
  expectKind(byName.get('str_ingested_at')!, ['timestamp'], 'Timestamp (s, ms, us)');
  expectKind(byName.get('model_version')!, ['string'], 'Utf8');
  for (const r of REQUIRED) if (byName.get(r)!.validity !== null) throw new Error(`required column "${r}" holds nulls`);
  for (const k of seriesKey) {
    const c = byName.get(k)!;
    if (c.kind !== 'string') throw new Error(`series-key column "${k}" must be Utf8 or Dictionary<Utf8>`);
    if (c.validity !== null) throw new Error(`series-key column "${k}" holds nulls`);
  }
  return { rows, columns, seriesKey };
}

function expectKind(c: DecodedColumn, kinds: string[], what: string): void {
  if (!kinds.includes(c.kind)) throw new Error(`column "${c.name}" must be ${what}`);
}

function readSeriesKey(metadata: Map<string, string>, fields: Field[]): string[] {
  const raw = metadata.get(SERIES_KEY_METADATA);
  if (raw === undefined) throw new Error(`schema metadata "${SERIES_KEY_METADATA}" is missing (use [] for a dataset of one series)`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error(`schema metadata "${SERIES_KEY_METADATA}" is not JSON`);
  }
  if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === 'string')) {
    throw new Error(`schema metadata "${SERIES_KEY_METADATA}" must be a JSON array of column names`);
  }
  const key = parsed as string[];
  if (new Set(key).size !== key.length) throw new Error(`"${SERIES_KEY_METADATA}" names a column twice`);
  for (const k of key) {
    if (!fields.some((f) => f.name === k)) throw new Error(`series-key column "${k}" is not in the schema`);
    if ((REQUIRED as readonly string[]).includes(k)) throw new Error(`"${k}" cannot be a series-key column`);
  }
  return key;
}

function decodeColumn(field: Field, chunks: Data[], rows: number): DecodedColumn {
  const type = field.type as DataType;
  const name = field.name;
  const validity = decodeValidity(chunks, rows);
  switch (type.typeId) {
    case Type.Date: {
      if ((type as unknown as { unit: DateUnit }).unit !== DateUnit.DAY) throw new Error(`column "${name}": Date64 is not supported, use Date32`);
      return { kind: 'date32', name, validity, values: concatFixed(chunks, rows, Int32Array) };
    }
    case Type.Timestamp: {
      const t = type as unknown as { unit: ArrowTimeUnit; timezone?: string | null };
      if (t.unit === ArrowTimeUnit.NANOSECOND) throw new Error(`column "${name}": nanosecond timestamps are refused (use s, ms or us)`);
      const tz = t.timezone ?? null;
      if (tz !== null && !['UTC', 'Etc/UTC', 'Z', '+00:00', 'utc'].includes(tz)) {
        throw new Error(`column "${name}": timestamps must be UTC, found timezone "${tz}"`);
      }
      const unit: TimeUnit = t.unit === ArrowTimeUnit.SECOND ? 's' : t.unit === ArrowTimeUnit.MILLISECOND ? 'ms' : 'us';
      return { kind: 'timestamp', name, validity, unit, values: decodeTimestamps(name, chunks, rows, unit) };
    }
    case Type.Float: {
      const p = (type as unknown as { precision: Precision }).precision;
      if (p === Precision.HALF) throw new Error(`column "${name}": Float16 is not supported`);
      return { kind: 'float', name, validity, values: p === Precision.SINGLE ? concatFixed(chunks, rows, Float32Array) : concatFixed(chunks, rows, Float64Array) };
    }
    case Type.Int: {
      const t = type as unknown as { bitWidth: number; isSigned: boolean };
      if (t.bitWidth === 64) {
        if (!t.isSigned) throw new Error(`column "${name}": Uint64 is not supported`);
        return { kind: 'int64', name, validity, values: concatFixed(chunks, rows, BigInt64Array) };
      }
      return { kind: 'int', name, validity, values: concatFixed(chunks, rows, intArrayCtor(t.bitWidth, t.isSigned)) };
    }
    case Type.Bool:
      return { kind: 'bool', name, validity, values: decodeBools(chunks, rows) };
    case Type.Utf8:
      return { kind: 'string', name, validity, ...decodeUtf8(chunks, rows) };
    case Type.Dictionary: {
      const dt = (type as unknown as { dictionary: DataType }).dictionary;
      if (dt.typeId !== Type.Utf8) throw new Error(`column "${name}": only Dictionary<Utf8> is supported`);
      return { kind: 'string', name, validity, ...decodeDictionary(chunks, rows) };
    }
    default:
      throw new Error(`column "${name}": Arrow type ${String(type)} is not supported (contract 6)`);
  }
}

type FixedCtor<T> = { new (n: number): T };

function concatFixed<T extends IntArray | Float64Array | Float32Array | BigInt64Array>(chunks: Data[], rows: number, ctor: FixedCtor<T>): T {
  const out = new ctor(rows);
  let at = 0;
  for (const d of chunks) {
    // `values` is already sliced to the chunk's offset, but may be padded past its length.
    (out as unknown as { set(a: ArrayLike<unknown>, o: number): void }).set((d.values as T).subarray(0, d.length), at);
    at += d.length;
  }
  return out;
}

function intArrayCtor(bits: number, signed: boolean): FixedCtor<IntArray> {
  switch (bits) {
    case 8:
      return signed ? Int8Array : Uint8Array;
    case 16:
      return signed ? Int16Array : Uint16Array;
    default:
      return signed ? Int32Array : Uint32Array;
  }
}

const SAFE_US = 2 ** 53;

function decodeTimestamps(name: string, chunks: Data[], rows: number, unit: TimeUnit): Float64Array {
  const scale = unit === 's' ? 1_000_000 : unit === 'ms' ? 1_000 : 1;
  const out = new Float64Array(rows);
  let at = 0;
  for (const d of chunks) {
    const v = d.values as BigInt64Array;
    // A null slot holds whatever the writer left (pandas' NaT is -2^63): never range-check it.
    const bm = d.nullCount > 0 ? d.nullBitmap : undefined;
    for (let i = 0; i < d.length; i++) {
      if (bm !== undefined && ((bm[(d.offset + i) >> 3]! >> ((d.offset + i) & 7)) & 1) === 0) {
        out[at + i] = 0;
        continue;
      }
      const us = Number(v[i]!) * scale;
      if (!(us > -SAFE_US && us < SAFE_US)) throw new Error(`column "${name}": timestamp out of range at row ${at + i}`);
      out[at + i] = us;
    }
    at += d.length;
  }
  return out;
}

function decodeValidity(chunks: Data[], rows: number): Uint8Array | null {
  if (!chunks.some((d) => d.nullCount > 0)) return null;
  const out = new Uint8Array(rows).fill(1);
  let at = 0;
  for (const d of chunks) {
    const bm = d.nullBitmap;
    if (d.nullCount > 0 && bm !== undefined && bm.length > 0) {
      for (let i = 0; i < d.length; i++) {
        const b = d.offset + i;
        out[at + i] = (bm[b >> 3]! >> (b & 7)) & 1;
      }
    }
    at += d.length;
  }
  return out;
}

function decodeBools(chunks: Data[], rows: number): Uint8Array {
  const out = new Uint8Array(rows);
  let at = 0;
  for (const d of chunks) {
    const bits = d.values as Uint8Array;
    for (let i = 0; i < d.length; i++) {
      const b = d.offset + i;
      out[at + i] = (bits[b >> 3]! >> (b & 7)) & 1;
    }
    at += d.length;
  }
  return out;
}

function decodeUtf8(chunks: Data[], rows: number): { codes: Int32Array; strings: string[] } {
  const codes = new Int32Array(rows);
  const strings: string[] = [];
  const codeOf = new Map<string, number>();
  let at = 0;
  for (const d of chunks) {
    const offsets = d.valueOffsets as Int32Array;
    const bytes = d.values as Uint8Array;
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < d.length; i++) {
      const s = buf.toString('utf8', offsets[i]!, offsets[i + 1]!);
      let c = codeOf.get(s);
      if (c === undefined) {
        c = strings.length;
        strings.push(s);
        codeOf.set(s, c);
      }
      codes[at + i] = c;
    }
    at += d.length;
  }
  return { codes, strings };
}

function decodeDictionary(chunks: Data[], rows: number): { codes: Int32Array; strings: string[] } {
  const codes = new Int32Array(rows);
  const strings: string[] = [];
  const codeOf = new Map<string, number>();
  let at = 0;
  for (const d of chunks) {
    // Dictionaries may differ per batch (deltas, replacements): map each batch's indices
    // onto one column-wide code space.
    const local = d.dictionary ? (d.dictionary.toArray() as Array<string | null>) : [];
    const remap = new Int32Array(local.length);
    for (let j = 0; j < local.length; j++) {
      const s = local[j] ?? '';
      let c = codeOf.get(s);
      if (c === undefined) {
        c = strings.length;
        strings.push(s);
        codeOf.set(s, c);
      }
      remap[j] = c;
    }
    const idx = d.values as IntArray;
    for (let i = 0; i < d.length; i++) {
      const j = idx[i]!;
      // A null slot's index is arbitrary (often 0, maybe out of range): validity decides.
      codes[at + i] = j >= 0 && j < remap.length ? remap[j]! : 0;
    }
    at += d.length;
  }
  return { codes, strings };
}
