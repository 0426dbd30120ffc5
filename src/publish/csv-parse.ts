/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF (a bare LF is accepted too), a
 * field in double quotes may hold commas, line breaks and doubled quotes (`""` is one `"`).
 * The first record is the header. A UTF-8 byte order mark is skipped.
 *
 * An unquoted empty field is null; a quoted one (`""`) is the empty string. That is the one
 * place CSV can tell the two apart, and `pitcache asof --format csv` writes them that way.
 */
export type CsvCell = string | null;

export interface CsvDocument {
  readonly header: readonly string[];
  readonly rows: readonly (readonly CsvCell[])[];
  /** the 1-based line each data row starts on, for messages */
  readonly lines: readonly number[];
}

export class CsvError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'CsvError';
  }
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

export function parseCsv(input: string): CsvDocument {
  const text = input.charCodeAt(0) === 0xfeff ? input.slice(1) : input;
  const records: CsvCell[][] = [];
  const lines: number[] = [];
  const n = text.length;
  let i = 0;
  let line = 1;
  while (i < n) {
    const start = line;
    const record: CsvCell[] = [];
    for (;;) {
      let cell: CsvCell;
      if (text.charCodeAt(i) === QUOTE) {
        let value = '';
        let from = ++i;
        for (;;) {
          if (i >= n) throw new CsvError(start, 'a quoted field is not closed');
          const c = text.charCodeAt(i);
          if (c === QUOTE) {
            if (text.charCodeAt(i + 1) === QUOTE) {
              value += text.slice(from, i + 1);
              i += 2;
              from = i;
              continue;
            }
            value += text.slice(from, i);
            i++;
            break;
          }
          if (c === LF) line++;
          i++;
        }
        const after = text.charCodeAt(i);
        if (i < n && after !== COMMA && after !== CR && after !== LF) throw new CsvError(line, 'text after the closing quote of a field');
        cell = value;
      } else {
        const from = i;
        while (i < n) {
          const c = text.charCodeAt(i);
          if (c === COMMA || c === CR || c === LF) break;
          if (c === QUOTE) throw new CsvError(line, 'a quote inside an unquoted field (quote the field and double the quote)');
          i++;
        }
        cell = i === from ? null : text.slice(from, i);
      }
      record.push(cell);
      if (i < n && text.charCodeAt(i) === COMMA) {
        i++;
        continue;
      }
      break;
    }
    // End of record: CRLF, LF, a lone CR, or the end of the text.
    if (text.charCodeAt(i) === CR) i++;
    if (text.charCodeAt(i) === LF) i++;
    line++;
    records.push(record);
    lines.push(start);
  }

  // A blank line at the end of the file is an editor's newline, not a record.
  while (records.length > 1 && records.at(-1)!.length === 1 && records.at(-1)![0] === null) {
    records.pop();
    lines.pop();
  }
  const header = records.shift();
  lines.shift();
  if (header === undefined) throw new CsvError(1, 'the file is empty (a header row is required)');
  const names: string[] = [];
  for (const [c, name] of header.entries()) {
    if (name === null || name === '') throw new CsvError(1, `header field ${c + 1} is empty`);
    if (names.includes(name)) throw new CsvError(1, `column ${JSON.stringify(name)} appears twice in the header`);
    names.push(name);
  }
  for (const [r, record] of records.entries()) {
    if (record.length !== names.length) {
      throw new CsvError(lines[r]!, `${record.length} field(s), the header has ${names.length}`);
    }
  }
  return { header: names, rows: records, lines };
}
