import type { CodeArray, Column, StringDictionary } from '../../store/column.js';
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
  const write: CellWriter = (b, p, row) => unquote(b, p, json.write(b, p, row));
  if (column.kind !== 'date32' && column.kind !== 'timestamp') return { write, maxBytes: json.maxBytes };
  // Dates and timestamps are always quoted in JSON, or `null`: written one byte early, over the byte
  // before the cell (kept and put back), their text starts where the cell does and needs
  // no shift; the closing quote is past the cell's end, where the next byte goes.
  const early: CellWriter = (b, p, row) => {
    if (p === 0) return write(b, p, row);
    const before = b[p - 1]!;
    const end = json.write(b, p - 1, row);
    const first = b[p - 1]!;
    b[p - 1] = before;
    // else `null` (a null, a NaN, an instant out of range: format-time.ts): an empty field
    return first === QUOTE ? end - 1 : p;
  };
  return { write: early, maxBytes: json.maxBytes };
}

/** The JSON text at [p, end) as a CSV field: unquoted (shifted back one byte), `null` as nothing, anything else as is. */
function unquote(b: Uint8Array, p: number, end: number): number {
  if (b[p] === N) return p;
  if (b[p] !== QUOTE) return end;
  for (let i = p + 1; i < end - 1; i++) b[i - 1] = b[i]!;
  return end - 2;
}

function stringCell(validity: Uint8Array | null, codes: CodeArray, dict: StringDictionary): { write: CellWriter; maxBytes: number } {
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
