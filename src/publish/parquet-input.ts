import { parquetMetadataAsync, parquetRead, type AsyncBuffer, type FileMetaData, type SchemaElement } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
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
 */
export async function parquetBatchInput(file: AsyncBuffer, name: string, seriesKey: readonly string[]): Promise<BatchInput> {
  const groups = parquetRowGroups(file, name, seriesKey);
  const first = await groups.next();
  // The first row group (or an empty one when there is none) gives the schema.
  const head = await arrowBatchInput(first.value as Uint8Array, seriesKey);
  return {
    schema: head.schema,
    async *batches() {
      yield* head.batches();
      for await (const bytes of groups) yield* (await arrowBatchInput(bytes, seriesKey)).batches();
    },
    close: async () => {
      await groups.return(undefined);
    },
  };
}

async function* parquetRowGroups(file: AsyncBuffer, name: string, seriesKey: readonly string[]): AsyncGenerator<Uint8Array> {
  let metadata: FileMetaData;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw new Error(`${name} is not a Parquet file: ${(e as Error).message}`);
  }
  const leaves = columnsOf(metadata, name);
  const index = new Map(leaves.map((l, i) => [l.name, i]));
  const kv = new Map((metadata.key_value_metadata ?? []).map((e) => [e.key, e.value ?? '']));
  const declared = kv.get(SERIES_KEY_METADATA);
  let key: string[];
  try {
    key = declared === undefined ? [...seriesKey] : (JSON.parse(declared) as string[]);
  } catch {
    throw new Error(`${name}: key-value metadata "${SERIES_KEY_METADATA}" is not JSON`);
  }
  const arrow = (values: unknown[][]): Uint8Array => {
    const spec: SnapshotSpec = { columns: leaves.map((l, i) => ({ ...l.spec, values: values[i]! }) as ColumnSpec), seriesKey: key };
    return buildArrowSnapshot(spec, 'stream');
  };
  if (metadata.row_groups.length === 0) yield arrow(leaves.map(() => []));
  let groupStart = 0;
  for (const group of metadata.row_groups) {
    const rows = Number(group.num_rows);
    const groupEnd = groupStart + rows;
    const values = leaves.map(() => new Array<unknown>(rows));
    await parquetRead({
      file,
      metadata,
      rowStart: groupStart,
      rowEnd: groupEnd,
      compressors,
      utf8: true,
      // Instants and days as the stored numbers: no Date per cell, no rounding of µs.
      parsers: { timestampFromMilliseconds: (v: bigint) => v, timestampFromMicroseconds: (v: bigint) => v, dateFromDays: (d: number) => d },
      onChunk: ({ columnName, columnData, rowStart }) => {
        const c = index.get(columnName);
        if (c === undefined) return;
        const out = values[c]!;
        const from = Math.max(rowStart, groupStart);
        const to = Math.min(rowStart + columnData.length, groupEnd);
        for (let r = from; r < to; r++) out[r - groupStart] = columnData[r - rowStart] ?? null;
      },
    });
    groupStart = groupEnd;
    yield arrow(values);
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
