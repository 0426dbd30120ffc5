import type { Column, StringDictionary } from '../../store/column.js';
import { compileCell, type CellWriter } from '../json/cell-writers.js';

/**
 * The cells of RFC 4180 CSV (records end in LF, as contract 9 says; RFC 4180 readers take
 * either). Each value is the text the JSON writer writes for it (same numbers, dates,
 * timestamps at their unit's precision), without JSON's quotes; a string is quoted only
 * when CSV needs it (a comma, quote or line break) or when it is empty, so that an empty
 * string (`""`) stays apart from a null (nothing). `pitcache publish` reads this back with
 * the same meaning. The header and records are csv-layout.ts'.
 */

/** A string as one CSV field: as is, or quoted with its quotes doubled when it must be. */
export function csvField(s: string): string {
  return s === '' || /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

const QUOTE = 0x22;
const N = 0x6e;

/** One column's CSV cell writer (by physical row, or by output position for a computed column) and its widest cell. */
export function compileCsvCell(column: Column): { write: CellWriter; maxBytes: number } {
  if (column.kind === 'string') return stringCell(column.validity, column.codes, column.dict);
  // Every other value is what the JSON cell writer writes, minus its quotes (dates,
  // timestamps, Int64 beyond 2^53 contain no character that needs CSV quoting) and with
  // JSON's `null` (a null, a NaN, an infinity) as an empty field.
  const json = compileCell(column);
  const write: CellWriter = (b, p, row) => {
    const end = json.write(b, p, row);
    if (b[p] === N) return p;
    if (b[p] !== QUOTE) return end;
    for (let i = p + 1; i < end - 1; i++) b[i - 1] = b[i]!;
    return end - 2;
  };
  return { write, maxBytes: json.maxBytes };
}

function stringCell(validity: Uint8Array | null, codes: Int32Array, dict: StringDictionary): { write: CellWriter; maxBytes: number } {
  // Pre-rendered once per distinct value, like the JSON dictionary.
  const fields = dict.values.map((v) => Buffer.from(csvField(v), 'utf8'));
  const maxBytes = fields.reduce((m, f) => Math.max(m, f.length), 0);
  const write: CellWriter = (b, p, row) => {
    if (validity !== null && validity[row] === 0) return p;
    const f = fields[codes[row]!]!;
    for (let i = 0; i < f.length; i++) b[p + i] = f[i]!;
    return p + f.length;
  };
  return { write, maxBytes };
}
