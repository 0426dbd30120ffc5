import { open } from 'node:fs/promises';
import { RecordBatch, RecordBatchReader, Schema, Table, tableFromIPC, tableToIPC } from 'apache-arrow';
import type { Data } from 'apache-arrow';
import type { DecodedColumn } from '../store/decode-arrow.js';
import { decodeArrowColumn } from '../store/arrow-column.js';
import { checkArrowColumns, decodeArrowSnapshot } from '../store/decode-arrow.js';
import { SERIES_KEY_METADATA } from '../snapshot/arrow-writer.js';
import { arrowSchemaInfo, describeType, makeSchema, readArrowSchema, unitScale, type ColumnDef, type DatasetSchema } from './dataset-schema.js';
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

/** An input read a record batch at a time: its own schema (known before any batch), then its batches. */
export interface BatchInput {
  readonly schema: DatasetSchema;
  /** each batch checked against contract 6 and decoded, in the input's schema; once only */
  batches(): AsyncGenerator<VersionTable>;
  /** lets the file go when the batches are not read to their end */
  close(): Promise<void>;
}

/**
 * Arrow IPC (file or stream) bytes or a file, read a record batch at a time: a file is read
 * through its handle, so only the batch being decoded is in memory. Without
 * `pitcache.series_key` in its schema, `seriesKey` is the key.
 */
export async function arrowBatchInput(input: Uint8Array | string, seriesKey: readonly string[]): Promise<BatchInput> {
  const handle = typeof input === 'string' ? await open(input) : null;
  try {
    let reader;
    try {
      reader = handle === null ? RecordBatchReader.from(input as Uint8Array) : await RecordBatchReader.from(handle);
      await reader.open();
    } catch (e) {
      throw new Error(`not an Arrow IPC file or stream: ${(e as Error).message}`);
    }
    let arrowSchema = reader.schema;
    const info = arrowSchemaInfo(arrowSchema);
    if (info.seriesKey === null) {
      const metadata = new Map(arrowSchema.metadata);
      metadata.set(SERIES_KEY_METADATA, JSON.stringify(seriesKey));
      arrowSchema = new Schema(arrowSchema.fields, metadata, arrowSchema.dictionaries);
    }
    // The schema alone is checked first: an input of no batch is refused as one of many.
    const checked = checkArrowColumns(arrowSchema, () => [], 0);
    const schema = makeSchema(info.columns, checked.seriesKey, info.metadata);
    const open = reader;
    return {
      schema,
      async *batches() {
        try {
          let firstRow = 0;
          for await (const batch of open as AsyncIterable<RecordBatch>) {
            const rows = batch.numRows;
            const snap = checkArrowColumns(arrowSchema, (i) => [batch.data.children[i] as Data], rows, firstRow);
            firstRow += rows;
            yield { schema, rows, columns: snap.columns.map((c) => decodeArrowColumn(c, null)) };
          }
        } finally {
          await handle?.close();
        }
      },
      close: async () => {
        await handle?.close();
      },
    };
  } catch (e) {
    await handle?.close();
    throw e;
  }
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
