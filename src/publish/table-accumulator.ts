import type { DecodedColumn } from '../store/decode-arrow.js';
import { dropped } from './collect-garbage.js';
import type { DatasetSchema } from './dataset-schema.js';
import type { ChunkedTable } from './chunked-table.js';
import type { VersionTable } from './version-table.js';

/**
 * Batches in one schema (conformed already) -> one ChunkedTable, rows one batch after the
 * other: the batches of an input read a batch at a time, the files of an `--input` folder in
 * name order, the parts of a stored generation. What is kept is typed columns only: each
 * batch's strings are mapped onto one code space per column as the batch arrives (each
 * distinct value once, whichever batch it came from), and the batch's list of strings is
 * dropped. The batches are kept as they are, not joined (chunked-table.ts says why).
 */
export class TableAccumulator {
  private chunks: VersionTable[] = [];
  private readonly strings: Array<string[] | null>;
  private readonly codeOf: Array<Map<string, number> | null>;
  private count = 0;

  constructor(readonly schema: DatasetSchema) {
    this.strings = schema.columns.map((d) => (d.type === 'utf8' || d.type === 'dict-utf8' ? [] : null));
    this.codeOf = schema.columns.map((d) => (d.type === 'utf8' || d.type === 'dict-utf8' ? new Map() : null));
  }

  get rows(): number {
    return this.count;
  }

  /** Takes the batch's columns over (their string codes are rewritten in place). */
  append(batch: VersionTable): void {
    if (batch.schema !== this.schema) throw new Error('TableAccumulator: every batch must be in the schema');
    if (batch.rows === 0) return;
    const columns = batch.columns.map((col, c): DecodedColumn => {
      if (col.kind !== 'string') return col;
      const strings = this.strings[c]!;
      const codeOf = this.codeOf[c]!;
      const remap = new Int32Array(col.strings.length);
      for (let k = 0; k < col.strings.length; k++) {
        const s = col.strings[k]!;
        let code = codeOf.get(s);
        if (code === undefined) codeOf.set(s, (code = strings.push(s) - 1));
        remap[k] = code;
      }
      const codes = col.codes;
      for (let i = 0; i < codes.length; i++) codes[i] = remap[codes[i]!]!;
      return { ...col, strings };
    });
    this.chunks.push({ schema: this.schema, rows: batch.rows, columns });
    this.count += batch.rows;
    // What read the batch (its bytes, a Parquet row group's cells, CSV text) is garbage now,
    // about as large as the columns it gave.
    let bytes = 0;
    for (const col of columns) bytes += (col.kind === 'string' ? col.codes : col.values).byteLength;
    dropped(bytes);
  }

  finish(): ChunkedTable {
    const table: ChunkedTable = { schema: this.schema, rows: this.count, chunks: this.chunks, strings: this.strings };
    this.chunks = [];
    this.count = 0;
    return table;
  }
}

/** A table of no rows in the schema (to check an input's schema before any batch). */
export function emptyTable(schema: DatasetSchema): VersionTable {
  return { schema, rows: 0, columns: schema.columns.map((d) => emptyColumn(d.name, d.type, d.unit, [])) };
}

/** A column of no rows (an input of no batches) in the dataset's type. */
function emptyColumn(name: string, type: DatasetSchema['columns'][number]['type'], unit: 's' | 'ms' | 'us' | null, strings: string[]): DecodedColumn {
  switch (type) {
    case 'utf8':
    case 'dict-utf8':
      return { kind: 'string', name, validity: null, codes: new Int32Array(0), strings };
    case 'date32':
      return { kind: 'date32', name, validity: null, values: new Int32Array(0) };
    case 'timestamp':
      return { kind: 'timestamp', name, validity: null, unit: unit ?? 'us', values: new Float64Array(0) };
    case 'float64':
      return { kind: 'float', name, validity: null, values: new Float64Array(0) };
    case 'float32':
      return { kind: 'float', name, validity: null, values: new Float32Array(0) };
    case 'int64':
      return { kind: 'int64', name, validity: null, values: new BigInt64Array(0) };
    case 'bool':
      return { kind: 'bool', name, validity: null, values: new Uint8Array(0) };
    case 'int8':
      return { kind: 'int', name, validity: null, values: new Int8Array(0) };
    case 'int16':
      return { kind: 'int', name, validity: null, values: new Int16Array(0) };
    case 'int32':
      return { kind: 'int', name, validity: null, values: new Int32Array(0) };
    case 'uint8':
      return { kind: 'int', name, validity: null, values: new Uint8Array(0) };
    case 'uint16':
      return { kind: 'int', name, validity: null, values: new Uint16Array(0) };
    case 'uint32':
      return { kind: 'int', name, validity: null, values: new Uint32Array(0) };
  }
}
