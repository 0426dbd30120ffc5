/**
 * The generated rows again, for the alternatives that cannot read the Arrow file themselves:
 * column-major batches read back from the file, so they are exactly what pitcache loads
 * (csv-file.ts turns them into the CSV side file).
 */
import { open } from 'node:fs/promises';
import { DataType, RecordBatchReader, type Data, type RecordBatch } from 'apache-arrow';
import type { BenchBatch, BenchColumn, BenchColumnType } from '../alternatives/types.js';
import { US_PER_DAY } from '../../src/time/instant.js';

/** Column types as the batches and the CSV present them (str_effective_at is always a timestamp). */
export function benchColumnsOf(batch: RecordBatch): BenchColumn[] {
  return batch.schema.fields.map((f) => ({ name: f.name, type: f.name === 'str_effective_at' ? 'timestamp' : typeOf(f.type) }));
}

function typeOf(t: DataType): BenchColumnType {
  if (DataType.isDate(t)) return 'date32';
  if (DataType.isTimestamp(t)) return 'timestamp';
  if (DataType.isUtf8(t) || DataType.isDictionary(t)) return 'utf8';
  if (DataType.isBool(t)) return 'bool';
  if (DataType.isInt(t)) return 'int32';
  if (DataType.isFloat(t)) return t.precision === 2 ? 'float64' : 'float32';
  throw new Error(`bench data: unexpected Arrow type ${String(t)}`);
}

export async function* readBatches(arrowPath: string): AsyncGenerator<BenchBatch & { columnTypes: BenchColumn[] }> {
  const handle = await open(arrowPath, 'r');
  try {
    const reader = await RecordBatchReader.from(handle);
    await reader.open();
    for await (const batch of reader) {
      const types = benchColumnsOf(batch);
      const columns = batch.schema.fields.map((f, i) => convert(batch.getChildAt(i)!.data[0]!, f.type, types[i]!.type));
      yield { length: batch.numRows, columns, columnTypes: types };
    }
  } finally {
    await handle.close();
  }
}

function convert(data: Data, t: DataType, want: BenchColumnType): BenchBatch['columns'][number] {
  const n = data.length;
  if (DataType.isDate(t)) {
    const days = data.values as Int32Array;
    if (want === 'date32') return Int32Array.from(days.subarray(0, n));
    return Float64Array.from(days.subarray(0, n), (d) => d * US_PER_DAY);
  }
  if (DataType.isTimestamp(t)) {
    const unitUs = [1_000_000, 1000, 1, 0.001][t.unit]!;
    const words = new Int32Array((data.values as BigInt64Array).buffer, (data.values as BigInt64Array).byteOffset, 2 * n);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) out[i] = (words[2 * i + 1]! * 2 ** 32 + (words[2 * i]! >>> 0)) * unitUs;
    return out;
  }
  if (DataType.isDictionary(t)) {
    const words: (string | null)[] = [];
    const dict = data.dictionary!;
    for (let i = 0; i < dict.length; i++) words.push(dict.get(i) as string | null);
    const codes = data.values as Int32Array;
    return Array.from({ length: n }, (_, i) => (data.getValid(i) ? (words[codes[i]!] ?? null) : null));
  }
  if (DataType.isUtf8(t)) {
    const offsets = data.valueOffsets as Int32Array;
    const bytes = data.values as Uint8Array;
    const decoder = new TextDecoder();
    return Array.from({ length: n }, (_, i) => (data.getValid(i) ? decoder.decode(bytes.subarray(offsets[i]!, offsets[i + 1]!)) : null));
  }
  if (DataType.isBool(t)) {
    const bits = data.values as Uint8Array;
    return Uint8Array.from({ length: n }, (_, i) => (!data.getValid(i) ? 2 : (bits[(data.offset + i) >> 3]! >> ((data.offset + i) & 7)) & 1));
  }
  const values = data.values as Float64Array | Float32Array | Int32Array;
  return Float64Array.from({ length: n }, (_, i) => (data.getValid(i) ? values[i]! : NaN));
}
