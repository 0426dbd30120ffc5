import type { DecodedColumn } from '../store/decode-arrow.js';
import type { DatasetSchema } from './dataset-schema.js';
import type { VersionTable } from './version-table.js';

/**
 * Batches in one schema (conformed already) -> one table, rows one batch after the other:
 * the batches of an input read a batch at a time, the files of an `--input` folder in name
 * order, the parts of a stored generation. What is kept is typed columns only: each batch's
 * strings are mapped onto one code space per column as the batch arrives (each distinct
 * value once, whichever batch it came from), and the batch's list of strings is dropped.
 * `finish` joins the batches column by column, so the join needs one column more than the
 * rows themselves, never a second copy of the table.
 */
export class TableAccumulator {
  private readonly chunks: DecodedColumn[][];
  private readonly strings: Array<string[] | null>;
  private readonly codeOf: Array<Map<string, number> | null>;
  private count = 0;

  constructor(readonly schema: DatasetSchema) {
    this.chunks = schema.columns.map(() => []);
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
    batch.columns.forEach((col, c) => {
      if (col.kind === 'string') {
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
        this.chunks[c]!.push({ ...col, strings });
      } else this.chunks[c]!.push(col);
    });
    this.count += batch.rows;
  }

  finish(): VersionTable {
    const rows = this.count;
    const columns = this.schema.columns.map((def, c): DecodedColumn => {
      const parts = this.chunks[c]!;
      this.chunks[c] = [];
      if (parts.length === 1) return parts[0]!;
      if (parts.length === 0) return emptyColumn(def.name, def.type, def.unit, this.strings[c] ?? []);
      return join(parts, rows);
    });
    this.count = 0;
    return { schema: this.schema, rows, columns };
  }
}

function join(parts: readonly DecodedColumn[], rows: number): DecodedColumn {
  const first = parts[0]!;
  let validity: Uint8Array | null = null;
  if (parts.some((p) => p.validity !== null)) {
    validity = new Uint8Array(rows);
    let at = 0;
    for (const p of parts) {
      if (p.validity === null) validity.fill(1, at, at + lengthOf(p));
      else validity.set(p.validity, at);
      at += lengthOf(p);
    }
  }
  if (first.kind === 'string') {
    const codes = new Int32Array(rows);
    let at = 0;
    for (const p of parts) {
      codes.set((p as typeof first).codes, at);
      at += lengthOf(p);
    }
    return { ...first, validity, codes };
  }
  type Typed = ArrayLike<unknown> & { set(a: ArrayLike<unknown>, o: number): void };
  const arrays = parts.map((p) => (p as unknown as { values: Typed }).values);
  const Ctor = arrays[0]!.constructor as new (n: number) => Typed;
  const values = new Ctor(rows);
  let at = 0;
  for (const a of arrays) {
    values.set(a, at);
    at += a.length;
  }
  return { ...first, validity, values } as DecodedColumn;
}

function lengthOf(c: DecodedColumn): number {
  return c.kind === 'string' ? c.codes.length : c.values.length;
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
