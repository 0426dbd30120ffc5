import { RecordBatch, Schema, Table, tableFromIPC, tableToIPC } from 'apache-arrow';
import type { DecodedColumn } from '../store/decode-arrow.js';
import { decodeArrowColumn } from '../store/arrow-column.js';
import { decodeArrowSnapshot, readArrowSnapshot } from '../store/decode-arrow.js';
import { joinParts } from '../store/snapshot-to-table.js';
import { SERIES_KEY_METADATA } from '../snapshot/arrow-writer.js';
import { describeType, makeSchema, readArrowSchema, unitScale, type ColumnDef, type DatasetSchema } from './dataset-schema.js';
import type { VersionTable } from './version-table.js';

/**
 * Arrow IPC bytes -> a VersionTable in the file's own schema, checked against contract 6 by
 * the server's decoder. A file without `pitcache.series_key` (rows from a pipeline that
 * does not know about it) gets `seriesKey` first, so the decoder can check it.
 */
export function decodeArrowTable(bytes: Uint8Array, seriesKey: readonly string[]): VersionTable {
  const info = readArrowSchema(bytes);
  const withKey = info.seriesKey === null ? addSeriesKey(bytes, seriesKey) : bytes;
  const decoded = decodeArrowSnapshot(withKey);
  const columns = info.columns;
  return { schema: makeSchema(columns, decoded.seriesKey, info.metadata), rows: decoded.rows, columns: decoded.columns };
}

/** The parts of a stored generation (contract 14, checked as a server checks them) -> one VersionTable. */
export function decodeArrowParts(parts: readonly Uint8Array[], names: readonly string[]): VersionTable {
  const info = readArrowSchema(parts[0]!);
  const { snap } = joinParts(
    parts.map((p) => readArrowSnapshot(p)),
    names,
  );
  const columns = snap.columns.map((c) => decodeArrowColumn(c, null));
  return { schema: makeSchema(info.columns, snap.seriesKey, info.metadata), rows: snap.rows, columns };
}

function addSeriesKey(bytes: Uint8Array, seriesKey: readonly string[]): Uint8Array {
  const table = tableFromIPC(bytes);
  const metadata = new Map(table.schema.metadata);
  metadata.set(SERIES_KEY_METADATA, JSON.stringify(seriesKey));
  const schema = new Schema(table.schema.fields, metadata, table.schema.dictionaries);
  return tableToIPC(
    new Table(
      schema,
      table.batches.map((b) => new RecordBatch(schema, b.data)),
    ),
    'stream',
  );
}

/**
 * The same rows in the dataset's schema: columns reordered to it, and each converted to its
 * exact type where that loses nothing (Utf8 <-> Dictionary, another timestamp unit, another
 * integer width or float precision). Anything else is refused with the column named.
 */
export function conformTable(table: VersionTable, target: DatasetSchema, what: string): VersionTable {
  const have = new Map(table.schema.columns.map((def, i) => [def.name, i]));
  const missing = target.columns.filter((c) => !have.has(c.name)).map((c) => c.name);
  if (missing.length > 0) throw new Error(`${what} lacks the dataset's column(s) ${missing.join(', ')}`);
  const wanted = new Set(target.columns.map((c) => c.name));
  const extra = table.schema.columns.filter((c) => !wanted.has(c.name)).map((c) => c.name);
  if (extra.length > 0) throw new Error(`${what} has column(s) the dataset does not: ${extra.join(', ')}`);
  if (JSON.stringify(table.schema.seriesKey) !== JSON.stringify(target.seriesKey)) {
    throw new Error(`${what} declares series key ${JSON.stringify(table.schema.seriesKey)}, the dataset's is ${JSON.stringify(target.seriesKey)}`);
  }
  const columns = target.columns.map((def) => {
    const i = have.get(def.name)!;
    return convertColumn(table.columns[i]!, table.schema.columns[i]!, def, what);
  });
  return { schema: target, rows: table.rows, columns };
}

const INT_ARRAYS = {
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
} as const;

function convertColumn(col: DecodedColumn, from: ColumnDef, to: ColumnDef, what: string): DecodedColumn {
  if (from.type === to.type && from.unit === to.unit) return col;
  const refuse = (why = ''): never => {
    throw new Error(`column "${to.name}" is ${describeType(from)} in ${what} but ${describeType(to)} in the dataset${why}`);
  };
  const strings = (t: string): boolean => t === 'utf8' || t === 'dict-utf8';
  if (strings(from.type) && strings(to.type)) return col;
  if (col.kind === 'timestamp' && to.type === 'timestamp') {
    const scale = unitScale(to.unit!);
    for (let r = 0; r < col.values.length; r++) {
      if (col.validity?.[r] !== 0 && col.values[r]! % scale !== 0) refuse(`: row ${r} is finer than ${to.unit}`);
    }
    return { ...col, unit: to.unit! };
  }
  if (col.kind === 'float' && (to.type === 'float64' || to.type === 'float32')) {
    const values = to.type === 'float64' ? Float64Array.from(col.values) : Float32Array.from(col.values);
    for (let r = 0; r < values.length; r++) {
      if (col.validity?.[r] !== 0 && !Object.is(values[r], col.values[r])) refuse(`: row ${r} does not fit`);
    }
    return { ...col, values };
  }
  if (col.kind === 'int' && to.type in INT_ARRAYS) {
    const values = INT_ARRAYS[to.type as keyof typeof INT_ARRAYS].from(col.values);
    for (let r = 0; r < values.length; r++) {
      if (col.validity?.[r] !== 0 && values[r] !== col.values[r]) refuse(`: row ${r} does not fit`);
    }
    return { ...col, values };
  }
  return refuse();
}
