import { tableFromIPC, Type, type Data, type Table as ArrowTable } from 'apache-arrow';
import { decodeArrowColumn } from '../store/arrow-column.js';
import type { Column, StringColumn } from '../store/column.js';
import { readColumn } from '../store/decode-arrow.js';
import { buildStringDictionary } from '../store/string-dictionary.js';
import type { ArrowPassthrough } from '../format/arrow-passthrough.js';
import { US_PER_DAY } from '../time/instant.js';
import { concatOffsets } from './arrow-buffers.js';
import { arrowPassthrough } from './arrow-passthrough.js';
import { ByteInterner, internedColumn } from './byte-interner.js';
import { badEvents, checkEventNames, MAX_EVENTS, missingCell, tooManyEvents, type EventBatch, type EventSchema } from './event-batch.js';

/**
 * Events from an Arrow IPC stream (or file) body. `at` is a Timestamp of any unit but
 * nanoseconds (contract 6's units) or a Date32 (the end of that day); the series-key
 * columns are Utf8 or Dictionary<Utf8>. Every other column keeps its Arrow type in the
 * answer. For an Arrow answer (`passthrough`) each event column but `at` is passed through
 * as given, any flat type or dictionary (arrow-passthrough.ts: its buffers, not decoded);
 * only `at` and the series key are decoded, for the join. For a JSON or CSV answer the
 * columns are decoded whole (store/arrow-column.ts: no object per cell, strings once per
 * distinct value), among the types a snapshot may hold (contract 6).
 */
export function arrowEvents(body: Uint8Array, schema: EventSchema, passthrough = false): EventBatch {
  let table: ArrowTable;
  try {
    table = tableFromIPC(body);
  } catch (e) {
    throw badEvents(`the body is not an Arrow IPC stream: ${(e as Error).message}`);
  }
  // Bytes that hold no IPC message read as a table of no columns.
  if (table.schema.fields.length === 0) throw badEvents('the body is not an Arrow IPC stream (no schema message)');
  const rows = table.numRows;
  if (rows > MAX_EVENTS) throw tooManyEvents();
  const fields = table.schema.fields;
  checkEventNames(
    fields.map((f) => f.name),
    schema,
  );
  const columns: Column[] = [];
  const arrow: (ArrowPassthrough | undefined)[] = [];
  const keys = new Map<string, StringColumn>();
  let atUs: Float64Array = new Float64Array(0);
  fields.forEach((field, i) => {
    const chunks = (table.getChildAt(i)?.data ?? []) as Data[];
    const name = field.name;
    const isKey = schema.seriesKey.includes(name);
    if (name === 'at') {
      atUs = atColumn(field.type.typeId, chunks, rows, field);
      columns.push({ kind: 'timestamp', name: 'at', unit: 'us', values: atUs, validity: null });
      arrow.push(undefined);
      return;
    }
    const typeId = field.type.typeId;
    if (isKey && typeId !== Type.Utf8 && typeId !== Type.Dictionary && typeId !== Type.LargeUtf8)
      throw badEvents(`column "${name}" (a series-key column) must be Utf8, LargeUtf8 or Dictionary<Utf8>, not ${String(field.type)}`);
    arrow.push(passthrough ? arrowPassthrough(field, chunks, rows) : undefined);
    if (passthrough && !isKey) {
      // Written from its passthrough: only its name is read (format/page-view.ts).
      columns.push({ kind: 'bool', name, values: NO_VALUES, validity: null });
      return;
    }
    if (typeId === Type.LargeUtf8) {
      // polars writes its strings as LargeUtf8, which contract 6's decoder does not read: interned here
      const column = largeUtf8Column(name, chunks, rows, isKey);
      columns.push(column);
      if (isKey) keys.set(name, column);
      return;
    }
    const decoded = decodeEventColumn(field, chunks, rows, isKey);
    const column: Column =
      decoded.kind === 'string'
        ? { kind: 'string', name, codes: decoded.codes, dict: buildStringDictionary(decoded.strings), validity: decoded.validity }
        : decoded;
    columns.push(column);
    if (isKey) keys.set(name, column as StringColumn);
  });
  return { count: rows, atUs, columns, keys: schema.seriesKey.map((k) => keys.get(k)!), arrow: passthrough ? arrow : null };
}

const NO_VALUES = new Uint8Array(0);

/** A LargeUtf8 column as interned codes (byte-interner.ts: one string per distinct value); `required` (a series-key column): a null is a missing cell. */
function largeUtf8Column(name: string, chunks: readonly Data[], rows: number, required: boolean): StringColumn {
  let validity: Uint8Array | null = null;
  if (chunks.some((d) => d.nullCount > 0)) {
    validity = new Uint8Array(rows);
    let row = 0;
    for (const d of chunks) for (let i = 0; i < d.length; i++, row++) validity[row] = d.getValid(i) ? 1 : 0;
    const first = validity.indexOf(0);
    if (required) throw missingCell(first, name);
  }
  const [offsetBytes, bytes] = concatOffsets(chunks, rows, 8);
  const words = new Int32Array(offsetBytes.buffer, offsetBytes.byteOffset, 2 * (rows + 1));
  const interner = new ByteInterner();
  const codes = new Int32Array(rows);
  // offsets below 2^32: a body is at most 256 MiB
  for (let i = 0; i < rows; i++) codes[i] = interner.intern(bytes, words[2 * i]! >>> 0, words[2 * i + 2]! >>> 0);
  return internedColumn(name, interner, codes, validity);
}

/** `at`: a Timestamp (s, ms, us) or a Date32, as µs; a null is a missing `at` (400 naming its row). */
function atColumn(typeId: Type, chunks: Data[], rows: number, field: Parameters<typeof readColumn>[0]): Float64Array {
  if (typeId !== Type.Timestamp && typeId !== Type.Date) throw badEvents(`column "at" must be a Timestamp or a Date32, not ${String(field.type)}`);
  const decoded = decodeEventColumn(field, chunks, rows, true);
  if (decoded.kind === 'timestamp') return decoded.values;
  if (decoded.kind !== 'date32') throw badEvents('column "at" must be a Timestamp or a Date32');
  // A date is the end of that UTC day (contract 1).
  const out = new Float64Array(rows);
  const days = decoded.values;
  for (let i = 0; i < rows; i++) out[i] = (days[i]! + 1) * US_PER_DAY - 1;
  return out;
}

/** One column of the body decoded whole; `required` (`at`, a series-key column): a null is a missing cell (400 naming its row). */
function decodeEventColumn(field: Parameters<typeof readColumn>[0], chunks: Data[], rows: number, required: boolean): ReturnType<typeof decodeArrowColumn> {
  let arrow;
  try {
    arrow = readColumn(field, chunks, rows);
  } catch (e) {
    // Types beyond contract 6's have no JSON or CSV rendering here; an Arrow answer carries them as given.
    throw badEvents(`${(e as Error).message}; with format=arrow, every flat Arrow type is passed through as given`);
  }
  const decoded = decodeArrowColumn(arrow, null);
  if (required && decoded.validity !== null) {
    const row = decoded.validity.indexOf(0);
    if (row >= 0) throw missingCell(row, field.name);
  }
  return decoded;
}
