import { DateUnit, Precision, RecordBatchReader, TimeUnit as ArrowTimeUnit, Type } from 'apache-arrow';
import type { DataType, Field, Schema } from 'apache-arrow';
import { SERIES_KEY_METADATA, type ColumnType } from '../snapshot/arrow-writer.js';

/**
 * The schema of a dataset as publishing keeps it: every column's exact Arrow type (the
 * decoded columns say "string" for Utf8 and Dictionary<Utf8> alike, and publishing must not
 * turn one into the other), the series key, and every schema metadata entry, which is
 * written back unchanged.
 */
export type StoredUnit = 's' | 'ms' | 'us';

export interface ColumnDef {
  readonly name: string;
  readonly type: Exclude<ColumnType, 'timestamp'> | 'timestamp';
  /** the Arrow unit of a timestamp column; null for every other type */
  readonly unit: StoredUnit | null;
}

export interface DatasetSchema {
  readonly columns: readonly ColumnDef[];
  readonly seriesKey: readonly string[];
  /** every schema metadata entry, `pitcache.series_key` included */
  readonly metadata: ReadonlyMap<string, string>;
}

export interface ArrowSchemaInfo {
  readonly columns: ColumnDef[];
  /** null when the schema has no `pitcache.series_key` entry (or it is not a list of names) */
  readonly seriesKey: string[] | null;
  readonly metadata: Map<string, string>;
}

/** µs per unit: a stored value times this is microseconds. */
export function unitScale(unit: StoredUnit): number {
  return unit === 's' ? 1_000_000 : unit === 'ms' ? 1_000 : 1;
}

/** The instant floored to what a column of that unit can hold, in µs. */
export function floorToUnit(us: number, unit: StoredUnit): number {
  const scale = unitScale(unit);
  return Math.floor(us / scale) * scale;
}

/** Reads only the schema of Arrow IPC bytes (file or stream): no record batch is decoded. */
export function readArrowSchema(bytes: Uint8Array): ArrowSchemaInfo {
  let reader;
  try {
    reader = RecordBatchReader.from(bytes);
    reader.open();
  } catch (e) {
    throw new Error(`not an Arrow IPC file or stream: ${(e as Error).message}`);
  }
  return arrowSchemaInfo(reader.schema);
}

/** The same, of a schema already read (an input read a batch at a time). */
export function arrowSchemaInfo(schema: Schema): ArrowSchemaInfo {
  const metadata = new Map(schema.metadata);
  return { columns: schema.fields.map(columnDef), seriesKey: parseSeriesKey(metadata.get(SERIES_KEY_METADATA)), metadata };
}

function parseSeriesKey(raw: string | undefined): string[] | null {
  if (raw === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) && parsed.every((x) => typeof x === 'string') ? (parsed as string[]) : null;
  } catch {
    return null;
  }
}

function columnDef(field: Field): ColumnDef {
  const type = field.type as DataType;
  const name = field.name;
  const plain = (t: ColumnDef['type']): ColumnDef => ({ name, type: t, unit: null });
  switch (type.typeId) {
    case Type.Date:
      if ((type as unknown as { unit: DateUnit }).unit !== DateUnit.DAY) break;
      return plain('date32');
    case Type.Timestamp: {
      const unit = (type as unknown as { unit: ArrowTimeUnit }).unit;
      if (unit === ArrowTimeUnit.NANOSECOND) break;
      return { name, type: 'timestamp', unit: unit === ArrowTimeUnit.SECOND ? 's' : unit === ArrowTimeUnit.MILLISECOND ? 'ms' : 'us' };
    }
    case Type.Float: {
      const p = (type as unknown as { precision: Precision }).precision;
      if (p === Precision.HALF) break;
      return plain(p === Precision.SINGLE ? 'float32' : 'float64');
    }
    case Type.Int: {
      const t = type as unknown as { bitWidth: number; isSigned: boolean };
      if (t.bitWidth === 64) {
        if (!t.isSigned) break;
        return plain('int64');
      }
      return plain(`${t.isSigned ? 'int' : 'uint'}${t.bitWidth}` as ColumnDef['type']);
    }
    case Type.Bool:
      return plain('bool');
    case Type.Utf8:
      return plain('utf8');
    case Type.Dictionary:
      if ((type as unknown as { dictionary: DataType }).dictionary.typeId !== Type.Utf8) break;
      return plain('dict-utf8');
  }
  throw new Error(`column "${name}": Arrow type ${String(type)} is not supported (contract 6)`);
}

/** How a column's type reads in messages: `timestamp[ms]`, `float64`. */
export function describeType(def: ColumnDef): string {
  return def.unit === null ? def.type : `${def.type}[${def.unit}]`;
}

/** A schema with a series key: `pitcache.series_key` is set in the metadata too. */
export function makeSchema(columns: readonly ColumnDef[], seriesKey: readonly string[], metadata: ReadonlyMap<string, string> = new Map()): DatasetSchema {
  const md = new Map(metadata);
  md.set(SERIES_KEY_METADATA, JSON.stringify(seriesKey));
  return { columns, seriesKey, metadata: md };
}
