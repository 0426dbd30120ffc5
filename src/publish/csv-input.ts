import type { DecodedColumn } from '../store/decode-arrow.js';
import { parseDate, parseRfc3339 } from '../time/instant.js';
import { CsvError, type CsvCell, type CsvDocument } from './csv-parse.js';
import { describeType, makeSchema, unitScale, type ColumnDef, type DatasetSchema } from './dataset-schema.js';
import type { VersionTable } from './version-table.js';

/**
 * CSV records -> VersionTables, a batch at a time. With the dataset's schema (there is a
 * current snapshot) every cell is read as its column's type. Without one (a first publish)
 * the types are inferred from a first pass over the file (CsvTypeInference).
 *
 * Nulls: an empty cell is null. In a string column a quoted empty cell (`""`) is the empty
 * string; in any other column it is null too.
 */
const REQUIRED = new Set(['date', 'str_effective_at', 'str_observed_at', 'str_ingested_at', 'model_version']);

/** The header checked against the dataset's columns (once per file). */
export function checkCsvHeader(header: readonly string[], target: DatasetSchema): void {
  const index = new Set(header);
  const missing = target.columns.filter((c) => !index.has(c.name)).map((c) => c.name);
  if (missing.length > 0) throw new CsvError(1, `the header lacks column(s) ${missing.join(', ')}`);
  const known = new Set(target.columns.map((c) => c.name));
  const extra = header.filter((name) => !known.has(name));
  if (extra.length > 0) throw new CsvError(1, `column(s) ${extra.join(', ')} are not in the dataset`);
  for (const k of target.seriesKey) if (!known.has(k)) throw new CsvError(1, `series-key column ${JSON.stringify(k)} is not in the header`);
}

/** One batch of CSV records (header checked already) -> a VersionTable in the dataset's schema. */
export function csvTable(doc: CsvDocument, target: DatasetSchema): VersionTable {
  const index = new Map(doc.header.map((name, i) => [name, i]));
  const columns = target.columns.map((def) => {
    const notNull = REQUIRED.has(def.name) || target.seriesKey.includes(def.name);
    return readColumn(def, doc, index.get(def.name)!, notNull);
  });
  return { schema: target, rows: doc.rows.length, columns };
}

/**
 * What a first publish infers each column's type from, gathered batch by batch (a first
 * pass over the file): whether every non-empty cell is a date, a bool, a number.
 */
export class CsvTypeInference {
  private readonly seen: Array<{ any: boolean; dates: boolean; bools: boolean; someNumber: boolean; numbers: boolean }>;

  constructor(
    private readonly header: readonly string[],
    private readonly seriesKey: readonly string[],
  ) {
    this.seen = header.map(() => ({ any: false, dates: true, bools: true, someNumber: false, numbers: true }));
  }

  add(rows: readonly (readonly CsvCell[])[]): void {
    for (const [c, s] of this.seen.entries()) {
      for (const r of rows) {
        const v = r[c] ?? null;
        if (v === null || v === '') continue;
        s.any = true;
        if (s.dates && !DATE_RE.test(v)) s.dates = false;
        if (s.bools && !BOOL_RE.test(v)) s.bools = false;
        const number = NUMBER_RE.test(v);
        if (number) s.someNumber = true;
        else if (s.numbers && !(v.toLowerCase() in SPECIAL_FLOATS)) s.numbers = false;
      }
    }
  }

  /**
   * `date` Date32; `str_effective_at` Date32 when every value is a date, else Timestamp[us];
   * other `str_*` Timestamp[us] (RFC 3339); `model_version` and series-key columns Utf8;
   * a column of only true/false Bool; of only numbers Float64; anything else Utf8.
   */
  schema(): DatasetSchema {
    const columns = this.header.map((name, c): ColumnDef => {
      const s = this.seen[c]!;
      const timestamp: ColumnDef = { name, type: 'timestamp', unit: 'us' };
      if (name === 'date') return { name, type: 'date32', unit: null };
      if (name === 'str_effective_at') return s.any && s.dates ? { name, type: 'date32', unit: null } : timestamp;
      if (name.startsWith('str_')) return timestamp;
      if (name === 'model_version' || this.seriesKey.includes(name)) return { name, type: 'utf8', unit: null };
      if (s.any && s.bools) return { name, type: 'bool', unit: null };
      if (s.someNumber && s.numbers) return { name, type: 'float64', unit: null };
      return { name, type: 'utf8', unit: null };
    });
    return makeSchema(columns, this.seriesKey);
  }
}

const DATE_RE = /^\d{4}-\d{2}-\d{2}$/;
const NUMBER_RE = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BOOL_RE = /^(true|false)$/i;
const SPECIAL_FLOATS: Readonly<Record<string, number>> = {
  nan: NaN,
  '+nan': NaN,
  '-nan': NaN,
  inf: Infinity,
  '+inf': Infinity,
  infinity: Infinity,
  '+infinity': Infinity,
  '-inf': -Infinity,
  '-infinity': -Infinity,
};

function readColumn(def: ColumnDef, doc: CsvDocument, c: number, notNull: boolean): DecodedColumn {
  const n = doc.rows.length;
  let validity: Uint8Array | null = null;
  const isString = def.type === 'utf8' || def.type === 'dict-utf8';
  const cell = (r: number): string | null => {
    const v: CsvCell = doc.rows[r]![c]!;
    if (v === null || (v === '' && !isString)) {
      if (notNull) throw new CsvError(doc.lines[r]!, `${def.name} is empty (it is required)`);
      validity ??= new Uint8Array(n).fill(1);
      validity[r] = 0;
      return null;
    }
    return v;
  };
  const bad = (r: number, v: string, want: string): never => {
    throw new CsvError(doc.lines[r]!, `${def.name} must be ${want} (${describeType(def)}), got ${JSON.stringify(v)}`);
  };

  switch (def.type) {
    case 'utf8':
    case 'dict-utf8': {
      const codes = new Int32Array(n);
      const strings: string[] = [];
      const codeOf = new Map<string, number>();
      for (let r = 0; r < n; r++) {
        const v = cell(r);
        if (v === null) continue;
        let code = codeOf.get(v);
        if (code === undefined) codeOf.set(v, (code = strings.push(v) - 1));
        codes[r] = code;
      }
      return { kind: 'string', name: def.name, validity, codes, strings };
    }
    case 'date32': {
      const values = new Int32Array(n);
      for (let r = 0; r < n; r++) {
        const v = cell(r);
        if (v !== null) values[r] = parseDate(v) ?? bad(r, v, 'a date YYYY-MM-DD');
      }
      return { kind: 'date32', name: def.name, validity, values };
    }
    case 'timestamp': {
      const unit = def.unit!;
      const scale = unitScale(unit);
      const values = new Float64Array(n);
      for (let r = 0; r < n; r++) {
        const v = cell(r);
        if (v === null) continue;
        const us = parseRfc3339(v) ?? bad(r, v, 'an RFC 3339 timestamp with Z or an offset');
        if (us % scale !== 0) bad(r, v, `a whole number of ${unit === 's' ? 'seconds' : 'milliseconds'}`);
        values[r] = us;
      }
      return { kind: 'timestamp', name: def.name, validity, unit, values };
    }
    case 'float64':
    case 'float32': {
      const values = def.type === 'float64' ? new Float64Array(n) : new Float32Array(n);
      for (let r = 0; r < n; r++) {
        const v = cell(r);
        if (v !== null) values[r] = NUMBER_RE.test(v) ? Number(v) : (SPECIAL_FLOATS[v.toLowerCase()] ?? bad(r, v, 'a number'));
      }
      return { kind: 'float', name: def.name, validity, values };
    }
    case 'int64': {
      const values = new BigInt64Array(n);
      for (let r = 0; r < n; r++) {
        const v = cell(r);
        if (v === null) continue;
        const x = /^[+-]?\d{1,19}$/.test(v) ? BigInt(v) : bad(r, v, 'an integer');
        values[r] = x;
        if (values[r] !== x) bad(r, v, 'an integer in range');
      }
      return { kind: 'int64', name: def.name, validity, values };
    }
    case 'bool': {
      const values = new Uint8Array(n);
      for (let r = 0; r < n; r++) {
        const v = cell(r);
        if (v === null) continue;
        const lower = v.toLowerCase();
        if (lower !== 'true' && lower !== 'false') bad(r, v, 'true or false');
        values[r] = lower === 'true' ? 1 : 0;
      }
      return { kind: 'bool', name: def.name, validity, values };
    }
    default: {
      const values = INT_ARRAYS[def.type](n);
      for (let r = 0; r < n; r++) {
        const v = cell(r);
        if (v === null) continue;
        const x = /^[+-]?\d{1,10}$/.test(v) ? Number(v) : bad(r, v, 'an integer');
        values[r] = x;
        if (values[r] !== x) bad(r, v, 'an integer in range');
      }
      return { kind: 'int', name: def.name, validity, values };
    }
  }
}

const INT_ARRAYS = {
  int8: (n: number) => new Int8Array(n),
  int16: (n: number) => new Int16Array(n),
  int32: (n: number) => new Int32Array(n),
  uint8: (n: number) => new Uint8Array(n),
  uint16: (n: number) => new Uint16Array(n),
  uint32: (n: number) => new Uint32Array(n),
} as const;
