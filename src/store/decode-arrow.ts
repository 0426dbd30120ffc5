import { DateUnit, Precision, TimeUnit as ArrowTimeUnit, Type, tableFromIPC } from 'apache-arrow';
import type { Data, DataType, Field, Schema, Table as ArrowTable } from 'apache-arrow';
import { decodeArrowColumn, firstTimestampOutOfRange, type ArrowColumn, type IntCtor } from './arrow-column.js';
import type { TimeUnit } from './column.js';
import type { DecodedColumn } from './decoded-column.js';

/**
 * Arrow IPC bytes (file or stream format) -> columns checked against contract 6.
 * `readArrowSnapshot` only checks; the server's table builder then decodes each column once,
 * straight into the table's row order. `decodeArrowSnapshot` decodes every column in snapshot
 * order (publishing, tools). Strings come out as codes plus the list of distinct values, in
 * order of first appearance; the table builder turns those into dictionaries.
 *
 * Everything here runs once per generation. Each check names the column and the rule, so
 * an operator reading the log knows what to fix.
 */
export type { DecodedColumn } from './decoded-column.js';

export interface DecodedSnapshot {
  readonly rows: number;
  readonly columns: DecodedColumn[];
  readonly seriesKey: string[];
  readonly fields: readonly StoredField[];
}

/** A column as the snapshot stores it, for GET /catalog (contract 13): `type` as apache-arrow's DataType#toString() writes it. */
export interface StoredField {
  readonly name: string;
  readonly type: string;
  readonly nullable: boolean;
}

/** A snapshot checked against contract 6, its columns not decoded yet (see arrow-column.ts). */
export interface ArrowSnapshot {
  readonly rows: number;
  readonly columns: ArrowColumn[];
  readonly seriesKey: string[];
  readonly fields: readonly StoredField[];
  /** every column's name, Arrow type and nullability, and the series key: equal for parts of one generation (contract 14) */
  readonly schemaText: string;
}

export const SERIES_KEY_METADATA = 'pitcache.series_key';
const REQUIRED = ['date', 'str_effective_at', 'str_observed_at', 'str_ingested_at', 'model_version'] as const;

export function decodeArrowSnapshot(bytes: Uint8Array): DecodedSnapshot {
  const snap = readArrowSnapshot(bytes);
  return { rows: snap.rows, seriesKey: snap.seriesKey, fields: snap.fields, columns: snap.columns.map((c) => decodeArrowColumn(c, null)) };
}

/** Parses and checks the bytes; every refusal of contract 6 is thrown here, decoding cannot fail after it. */
export function readArrowSnapshot(bytes: Uint8Array): ArrowSnapshot {
  let table: ArrowTable;
  try {
    table = tableFromIPC(bytes);
  } catch (e) {
    throw new Error(`not an Arrow IPC file or stream: ${(e as Error).message}`);
  }
  return checkArrowColumns(table.schema, (i) => (table.getChildAt(i)?.data ?? []) as Data[], table.numRows);
}

/**
 * Record batches under a schema -> columns checked against contract 6: a whole snapshot, or
 * one batch of a publish input read in batches (`firstRow` then numbers rows in messages as
 * in the whole input).
 */
export function checkArrowColumns(schema: Schema, chunksOf: (field: number) => Data[], rows: number, firstRow = 0): ArrowSnapshot {
  const fields = schema.fields;
  const names = new Set<string>();
  for (const f of fields) {
    if (names.has(f.name)) throw new Error(`column "${f.name}" appears twice`);
    names.add(f.name);
  }
  for (const r of REQUIRED) if (!names.has(r)) throw new Error(`required column "${r}" is missing`);
  const seriesKey = readSeriesKey(schema.metadata, fields);

  const columns = fields.map((field, i) => readColumn(field, chunksOf(i), rows, firstRow));

  const byName = new Map(columns.map((c) => [c.name, c]));
  expectKind(byName.get('date')!, ['date32'], 'Date32');
  expectKind(byName.get('str_effective_at')!, ['timestamp', 'date32'], 'Timestamp (s, ms, us) or Date32');
  expectKind(byName.get('str_observed_at')!, ['timestamp'], 'Timestamp (s, ms, us)');
  expectKind(byName.get('str_ingested_at')!, ['timestamp'], 'Timestamp (s, ms, us)');
  expectKind(byName.get('model_version')!, ['string'], 'Utf8');
  for (const r of REQUIRED) if (byName.get(r)!.hasNulls) throw new Error(`required column "${r}" holds nulls`);
  for (const k of seriesKey) {
    const c = byName.get(k)!;
    if (c.kind !== 'string') throw new Error(`series-key column "${k}" must be Utf8 or Dictionary<Utf8>`);
    if (c.hasNulls) throw new Error(`series-key column "${k}" holds nulls`);
  }
  const stored = fields.map((f) => ({ name: f.name, type: String(f.type), nullable: f.nullable }));
  const schemaText = JSON.stringify([stored, seriesKey]);
  return { rows, columns, seriesKey, fields: stored, schemaText };
}

function expectKind(c: ArrowColumn, kinds: string[], what: string): void {
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

/** One column of Arrow record batches checked against the types of contract 6 (also an event column of contract 15). */
export function readColumn(field: Field, chunks: Data[], rows: number, firstRow = 0): ArrowColumn {
  const type = field.type as DataType;
  const name = field.name;
  const base = { name, chunks, rows, hasNulls: chunks.some((d) => d.nullCount > 0) };
  switch (type.typeId) {
    case Type.Date: {
      if ((type as unknown as { unit: DateUnit }).unit !== DateUnit.DAY) throw new Error(`column "${name}": Date64 is not supported, use Date32`);
      return { ...base, kind: 'date32' };
    }
    case Type.Timestamp: {
      const t = type as unknown as { unit: ArrowTimeUnit; timezone?: string | null };
      if (t.unit === ArrowTimeUnit.NANOSECOND) throw new Error(`column "${name}": nanosecond timestamps are refused (use s, ms or us)`);
      const tz = t.timezone ?? null;
      if (tz !== null && !['UTC', 'Etc/UTC', 'Z', '+00:00', 'utc'].includes(tz)) {
        throw new Error(`column "${name}": timestamps must be UTC, found timezone "${tz}"`);
      }
      const unit: TimeUnit = t.unit === ArrowTimeUnit.SECOND ? 's' : t.unit === ArrowTimeUnit.MILLISECOND ? 'ms' : 'us';
      const bad = firstTimestampOutOfRange(chunks, unit);
      if (bad >= 0) throw new Error(`column "${name}": timestamp out of range at row ${firstRow + bad}`);
      return { ...base, kind: 'timestamp', unit };
    }
    case Type.Float: {
      const p = (type as unknown as { precision: Precision }).precision;
      if (p === Precision.HALF) throw new Error(`column "${name}": Float16 is not supported`);
      return { ...base, kind: 'float', single: p === Precision.SINGLE };
    }
    case Type.Int: {
      const t = type as unknown as { bitWidth: number; isSigned: boolean };
      if (t.bitWidth === 64) {
        if (!t.isSigned) throw new Error(`column "${name}": Uint64 is not supported`);
        return { ...base, kind: 'int64' };
      }
      return { ...base, kind: 'int', ctor: intArrayCtor(t.bitWidth, t.isSigned) };
    }
    case Type.Bool:
      return { ...base, kind: 'bool' };
    case Type.Utf8:
      return { ...base, kind: 'string', dictionary: false };
    case Type.Dictionary: {
      const dt = (type as unknown as { dictionary: DataType }).dictionary;
      if (dt.typeId !== Type.Utf8) throw new Error(`column "${name}": only Dictionary<Utf8> is supported`);
      return { ...base, kind: 'string', dictionary: true };
    }
    default:
      throw new Error(`column "${name}": Arrow type ${String(type)} is not supported (contract 6)`);
  }
}

function intArrayCtor(bits: number, signed: boolean): IntCtor {
  switch (bits) {
    case 8:
      return signed ? Int8Array : Uint8Array;
    case 16:
      return signed ? Int16Array : Uint16Array;
    default:
      return signed ? Int32Array : Uint32Array;
  }
}
