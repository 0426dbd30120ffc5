/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF (a bare LF is accepted too), a
 * field in double quotes may hold commas, line breaks and doubled quotes (`""` is one `"`).
 * The first record is the header. A UTF-8 byte order mark is skipped.
 *
 * An unquoted empty field is null; a quoted one (`""`) is the empty string. That is the one
 * place CSV can tell the two apart, and `pitcache asof --format csv` writes them that way.
 *
 * The text comes in chunks and records go out in batches (CsvParser), so a file of any size
 * is read with one chunk and one batch of records in memory; `parseCsv` reads a whole text.
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

/** Records of one batch: data rows (the header is `CsvParser.header`) and the line each starts on. */
export interface CsvBatch {
  readonly rows: CsvCell[][];
  readonly lines: number[];
}

/**
 * Incremental parser: `push` text as it is read, `end` after the last chunk. A record cut by
 * the end of a chunk waits for the next one. Complete data records are handed to `onBatch`
 * `batchRows` at a time; a record of one empty field (a blank line) is held back until a
 * record follows it, since blank lines at the end of a file are an editor's newline.
 */
export class CsvParser {
  header: string[] | null = null;
  private pending = '';
  /** line of the first character of `pending` */
  private line = 1;
  private started = false;
  private rows: CsvCell[][] = [];
  private lines: number[] = [];
  /** lines of blank records not yet known to be inside the file */
  private blanks: number[] = [];

  constructor(
    private readonly onBatch: (batch: CsvBatch) => void,
    private readonly batchRows = 4_096,
  ) {}

  push(chunk: string): void {
    let text = this.pending + chunk;
    if (!this.started && text.length > 0) {
      this.started = true;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.pending = text.slice(this.parse(text, false));
  }

  end(): void {
    this.parse(this.pending, true);
    this.pending = '';
    if (this.header === null) throw new CsvError(1, 'the file is empty (a header row is required)');
    this.flush();
  }

  /** Parses the complete records of `text`; returns where the first incomplete one starts. */
  private parse(text: string, final: boolean): number {
    const n = text.length;
    let i = 0;
    while (i < n) {
      const start = this.line;
      let line = start;
      const record: CsvCell[] = [];
      let at = i;
      let complete = false;
      for (;;) {
        let cell: CsvCell;
        if (text.charCodeAt(at) === QUOTE) {
          let value = '';
          let from = ++at;
          let closed = false;
          while (at < n) {
            const c = text.charCodeAt(at);
            if (c === QUOTE) {
              if (at + 1 >= n && !final) break;
              if (text.charCodeAt(at + 1) === QUOTE) {
                value += text.slice(from, at + 1);
                at += 2;
                from = at;
                continue;
              }
              value += text.slice(from, at);
              at++;
              closed = true;
              break;
            }
            if (c === LF) line++;
            at++;
          }
          if (!closed) {
            if (final) throw new CsvError(start, 'a quoted field is not closed');
            break;
          }
          if (at >= n && !final) break;
          const after = text.charCodeAt(at);
          if (at < n && after !== COMMA && after !== CR && after !== LF) throw new CsvError(line, 'text after the closing quote of a field');
          cell = value;
        } else {
          const from = at;
          while (at < n) {
            const c = text.charCodeAt(at);
            if (c === COMMA || c === CR || c === LF) break;
            if (c === QUOTE) throw new CsvError(line, 'a quote inside an unquoted field (quote the field and double the quote)');
            at++;
          }
          if (at >= n && !final) break;
          cell = at === from ? null : text.slice(from, at);
        }
        record.push(cell);
        if (at < n && text.charCodeAt(at) === COMMA) {
          at++;
          continue;
        }
        complete = true;
        break;
      }
      if (!complete) break;
      // End of record: CRLF, LF, a lone CR, or the end of the text. A CR last in a chunk may
      // be the first half of a CRLF: wait for the next chunk.
      if (text.charCodeAt(at) === CR) {
        if (at + 1 >= n && !final) break;
        at++;
      }
      if (text.charCodeAt(at) === LF) at++;
      this.line = line + 1;
      i = at;
      this.record(record, start);
    }
    return i;
  }

  private record(record: CsvCell[], line: number): void {
    if (this.header === null) {
      this.header = headerOf(record);
      return;
    }
    if (record.length === 1 && record[0] === null) {
      this.blanks.push(line);
      return;
    }
    for (const blank of this.blanks) this.add([null], blank);
    this.blanks = [];
    this.add(record, line);
  }

  private add(record: CsvCell[], line: number): void {
    const width = this.header!.length;
    if (record.length !== width) throw new CsvError(line, `${record.length} field(s), the header has ${width}`);
    this.rows.push(record);
    this.lines.push(line);
    if (this.rows.length >= this.batchRows) this.flush();
  }

  private flush(): void {
    if (this.rows.length === 0) return;
    const batch = { rows: this.rows, lines: this.lines };
    this.rows = [];
    this.lines = [];
    this.onBatch(batch);
  }
}

function headerOf(record: readonly CsvCell[]): string[] {
  const names: string[] = [];
  for (const [c, name] of record.entries()) {
    if (name === null || name === '') throw new CsvError(1, `header field ${c + 1} is empty`);
    if (names.includes(name)) throw new CsvError(1, `column ${JSON.stringify(name)} appears twice in the header`);
    names.push(name);
  }
  return names;
}

/** A whole CSV text at once (small inputs, tests). */
export function parseCsv(input: string): CsvDocument {
  const rows: CsvCell[][] = [];
  const lines: number[] = [];
  const parser = new CsvParser((b) => {
    rows.push(...b.rows);
    lines.push(...b.lines);
  });
  parser.push(input);
  parser.end();
  return { header: parser.header!, rows, lines };
}
