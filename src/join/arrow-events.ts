import { tableFromIPC, Type, type Data, type Table as ArrowTable } from 'apache-arrow';
import { decodeArrowColumn } from '../store/arrow-column.js';
import type { Column, StringColumn } from '../store/column.js';
import { readColumn } from '../store/decode-arrow.js';
import { buildStringDictionary } from '../store/string-dictionary.js';
import { US_PER_DAY } from '../time/instant.js';
import { badEvents, checkEventNames, MAX_EVENTS, missingCell, tooManyEvents, type EventBatch, type EventSchema } from './event-batch.js';

/**
 * Events from an Arrow IPC stream (or file) body. `at` is a Timestamp of any unit but
 * nanoseconds (contract 6's units) or a Date32 (the end of that day); the series-key
 * columns are Utf8 or Dictionary<Utf8>; every other column keeps its Arrow type in the
 * answer, among the types a snapshot may hold (contract 6). Columns are decoded whole
 * (store/arrow-column.ts: no object per cell, strings once per distinct value).
 */
export function arrowEvents(body: Uint8Array, schema: EventSchema): EventBatch {
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
  const keys = new Map<string, StringColumn>();
  let atUs: Float64Array = new Float64Array(0);
  fields.forEach((field, i) => {
    const chunks = (table.getChildAt(i)?.data ?? []) as Data[];
    const name = field.name;
    const isKey = schema.seriesKey.includes(name);
    if (name === 'at') {
      atUs = atColumn(field.type.typeId, chunks, rows, field);
      columns.push({ kind: 'timestamp', name: 'at', unit: 'us', values: atUs, validity: null });
      return;
    }
    if (isKey && field.type.typeId !== Type.Utf8 && field.type.typeId !== Type.Dictionary)
      throw badEvents(`column "${name}" (a series-key column) must be Utf8 or Dictionary<Utf8>, not ${String(field.type)}`);
    const decoded = decodeEventColumn(field, chunks, rows, isKey);
    const column: Column =
      decoded.kind === 'string'
        ? { kind: 'string', name, codes: decoded.codes, dict: buildStringDictionary(decoded.strings), validity: decoded.validity }
        : decoded;
    columns.push(column);
    if (isKey) keys.set(name, column as StringColumn);
  });
  return { count: rows, atUs, columns, keys: schema.seriesKey.map((k) => keys.get(k)!) };
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
    throw badEvents((e as Error).message);
  }
  const decoded = decodeArrowColumn(arrow, null);
  if (required && decoded.validity !== null) {
    const row = decoded.validity.indexOf(0);
    if (row >= 0) throw missingCell(row, field.name);
  }
  return decoded;
}
