import { parquetMetadataAsync, type AsyncBuffer, type FileMetaData, type SchemaElement } from 'hyparquet';
import { ParquetFile } from 'parquet-wasm/node';
import { buildArrowSnapshot, type ColumnSpec, type SnapshotSpec } from '../snapshot/arrow-writer.js';
import { SERIES_KEY_METADATA } from '../store/decode-arrow.js';
import { arrowBatchInput, type BatchInput } from './arrow-input.js';

/**
 * A Parquet file -> the same rows as Arrow IPC bytes in contract 6's types, a row group at
 * a time, so that a Parquet input is checked and conformed exactly as an Arrow one
 * (arrow-input.ts) and only one row group is in memory. Types:
 * DATE -> Date32; TIMESTAMP (ms, µs; UTC or naive, taken as UTC) -> Timestamp of that unit;
 * DOUBLE/FLOAT; INT8..32, UINT8..32, INT64; BOOLEAN; UTF8/STRING/ENUM -> Utf8. Anything else
 * (DECIMAL, nanoseconds, nested columns) is refused with the column named. The series key
 * comes from the file's `pitcache.series_key` key-value metadata, else `seriesKey`.
 *
 * The schema is checked from the footer (hyparquet: a few kB read, refusals named before any
 * data is decoded); each row group is decoded by parquet-wasm (arrow-rs's Parquet reader in
 * WebAssembly) straight into Arrow IPC bytes, with no JS value per cell
 * (docs/decisions.md#parquet).
 */
export async function parquetBatchInput(file: Blob, name: string, seriesKey: readonly string[]): Promise<BatchInput> {
  const { key, groups } = await openParquet(file, name, seriesKey);
  const first = await groups.next();
  // The first row group (or an empty one when there is none) gives the schema.
  const head = await arrowBatchInput(first.value as Uint8Array, key);
  return {
    schema: head.schema,
    async *batches() {
      yield* head.batches();
      for await (const bytes of groups) yield* (await arrowBatchInput(bytes, key)).batches();
    },
    close: async () => {
      await groups.return(undefined);
    },
  };
}

/** hyparquet reads the footer through this: ranges of the Blob, read when asked. */
function blobBuffer(file: Blob): AsyncBuffer {
  return { byteLength: file.size, slice: (start, end) => file.slice(start, end).arrayBuffer() };
}

/** The footer read and checked: the series key, and the row groups as Arrow IPC streams, decoded one at a time when asked. */
async function openParquet(file: Blob, name: string, seriesKey: readonly string[]): Promise<{ key: string[]; groups: AsyncGenerator<Uint8Array> }> {
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(blobBuffer(file));
  } catch (e) {
    throw new Error(`${name} is not a Parquet file: ${(e as Error).message}`);
  }
  const leaves = columnsOf(metadata, name);
  const kv = new Map((metadata.key_value_metadata ?? []).map((e) => [e.key, e.value ?? '']));
  const declared = kv.get(SERIES_KEY_METADATA);
  let key: string[];
  try {
    key = declared === undefined ? [...seriesKey] : (JSON.parse(declared) as string[]);
  } catch {
    throw new Error(`${name}: key-value metadata "${SERIES_KEY_METADATA}" is not JSON`);
  }
  return { key, groups: rowGroups(file, name, metadata, leaves, key) };
}

async function* rowGroups(file: Blob, name: string, metadata: FileMetaData, leaves: readonly Leaf[], key: readonly string[]): AsyncGenerator<Uint8Array> {
  if (metadata.row_groups.length === 0) {
    const spec: SnapshotSpec = { columns: leaves.map((l) => ({ ...l.spec, values: [] }) as ColumnSpec), seriesKey: [...key] };
    yield buildArrowSnapshot(spec, 'stream');
    return;
  }
  const reader = await ParquetFile.fromFile(file);
  try {
    for (let g = 0; g < metadata.row_groups.length; g++) {
      const rows = Number(metadata.row_groups[g]!.num_rows);
      let table;
      try {
        table = await reader.read({ rowGroups: [g], batchSize: Math.max(1, rows) });
      } catch (e) {
        throw new Error(`${name}: row group ${g} cannot be read: ${e instanceof Error ? e.message : String(e)}`);
      }
      // intoIPCStream hands the table's memory over: nothing is left to free
      yield table.intoIPCStream();
    }
  } finally {
    reader.free();
  }
}

interface Leaf {
  readonly name: string;
  readonly spec: Omit<ColumnSpec, 'values'>;
}

function columnsOf(metadata: FileMetaData, file: string): Leaf[] {
  const [root, ...elements] = metadata.schema;
  if (root === undefined || elements.length !== (root.num_children ?? 0)) throw new Error(`${file}: nested Parquet columns are not supported (contract 6)`);
  return elements.map((e) => ({ name: e.name, spec: { name: e.name, ...typeOf(e, file) } as Omit<ColumnSpec, 'values'> }));
}

function typeOf(e: SchemaElement, file: string): Record<string, string> {
  const refuse = (what: string): never => {
    throw new Error(`${file}: column "${e.name}" is ${what} in Parquet, which contract 6 has no type for`);
  };
  if ((e.num_children ?? 0) > 0 || e.repetition_type === 'REPEATED') refuse('nested');
  const logical = e.logical_type as { type?: string; unit?: string; bitWidth?: number; isSigned?: boolean } | undefined;
  const converted = e.converted_type;
  if (converted === 'DECIMAL' || logical?.type === 'DECIMAL') refuse('DECIMAL (cast it to DOUBLE)');
  switch (e.type) {
    case 'BOOLEAN':
      return { type: 'bool' };
    case 'FLOAT':
      return { type: 'float32' };
    case 'DOUBLE':
      return { type: 'float64' };
    case 'INT32': {
      if (converted === 'DATE' || logical?.type === 'DATE') return { type: 'date32' };
      const int = logical?.type === 'INTEGER' ? { bits: logical.bitWidth ?? 32, signed: logical.isSigned ?? true } : convertedInt(converted);
      if (int.bits === 64) refuse('a 64-bit integer stored as INT32');
      return { type: `${int.signed ? 'int' : 'uint'}${int.bits}` };
    }
    case 'INT64': {
      const unit =
        logical?.type === 'TIMESTAMP' ? logical.unit : converted === 'TIMESTAMP_MICROS' ? 'MICROS' : converted === 'TIMESTAMP_MILLIS' ? 'MILLIS' : null;
      if (unit === 'NANOS') refuse('a nanosecond TIMESTAMP (use ms or µs)');
      if (unit !== null) return { type: 'timestamp', unit: unit === 'MILLIS' ? 'ms' : 'us' };
      if (converted === 'UINT_64' || (logical?.type === 'INTEGER' && logical.isSigned === false)) refuse('UINT64');
      return { type: 'int64' };
    }
    case 'BYTE_ARRAY':
      if (converted === 'UTF8' || converted === 'ENUM' || logical?.type === 'STRING' || logical?.type === 'ENUM') return { type: 'utf8' };
      return refuse('BYTE_ARRAY without a string type');
    default:
      return refuse(String(e.type));
  }
}

function convertedInt(converted: string | undefined): { bits: number; signed: boolean } {
  const m = /^(U?)INT_(8|16|32|64)$/.exec(converted ?? '');
  return m === null ? { bits: 32, signed: true } : { bits: Number(m[2]), signed: m[1] !== 'U' };
}
