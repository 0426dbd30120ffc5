import type { Column, StringColumn } from '../store/column.js';
import { buildStringDictionary } from '../store/string-dictionary.js';
import { dayEndUs, parseDate, parseRfc3339 } from '../time/instant.js';
import { badAt, badEvents, checkEventNames, MAX_EVENTS, missingCell, tooManyEvents, type EventBatch, type EventSchema } from './event-batch.js';

type Kind = 'unknown' | 'number' | 'string' | 'boolean';

/**
 * Events from a JSON body: an array of objects. Columns are the keys in the order they
 * first appear; a passthrough column holds one JSON type (numbers, strings or booleans;
 * null or absent cells are null) and comes back as given: a Float64, Utf8 or Bool column.
 */
export function jsonEvents(body: Uint8Array, schema: EventSchema): EventBatch {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (e) {
    throw badEvents(`the body is not JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw badEvents('the JSON body must be an array of objects, one per event');
  const events = parsed as unknown[];
  const n = events.length;
  if (n > MAX_EVENTS) throw tooManyEvents();
  const names: string[] = [];
  const index = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const e = events[i];
    if (typeof e !== 'object' || e === null || Array.isArray(e)) throw badEvents(`row ${i}: an event must be a JSON object`);
    for (const k in e) {
      if (!index.has(k)) {
        index.set(k, names.length);
        names.push(k);
      }
    }
  }
  // No events: the answer still has `at` and the series-key columns.
  if (n === 0) names.push('at', ...schema.seriesKey);
  checkEventNames(names, schema);
  const atUs = new Float64Array(n);
  const columns: Column[] = [];
  const keys = new Map<string, StringColumn>();
  for (const name of names) {
    if (name === 'at') {
      for (let i = 0; i < n; i++) {
        const v = (events[i] as Record<string, unknown>).at;
        if (v === undefined || v === null) throw missingCell(i, 'at');
        if (typeof v !== 'string') throw badAt(i, JSON.stringify(v));
        const day = parseDate(v);
        const t = day !== null ? dayEndUs(day) : parseRfc3339(v);
        if (t === null) throw badAt(i, v);
        atUs[i] = t;
      }
      columns.push({ kind: 'timestamp', name: 'at', unit: 'us', values: atUs, validity: null });
      continue;
    }
    const isKey = schema.seriesKey.includes(name);
    const column = passthrough(events, name, isKey);
    columns.push(column);
    if (isKey) keys.set(name, column as StringColumn);
  }
  return { count: n, atUs, columns, keys: schema.seriesKey.map((k) => keys.get(k)!) };
}

function passthrough(events: unknown[], name: string, isKey: boolean): Column {
  const n = events.length;
  let kind: Kind = isKey ? 'string' : 'unknown';
  let nulls = 0;
  for (let i = 0; i < n; i++) {
    const v = (events[i] as Record<string, unknown>)[name];
    if (v === undefined || v === null) {
      if (isKey) throw missingCell(i, name);
      nulls++;
      continue;
    }
    const t = typeof v;
    if (t !== 'number' && t !== 'string' && t !== 'boolean')
      throw badEvents(
        `row ${i}: column "${name}" holds ${Array.isArray(v) ? 'an array' : 'an object'}; a passthrough value is a string, a number, a boolean or null`,
      );
    if (kind === 'unknown') kind = t as Kind;
    else if (t !== kind)
      throw badEvents(
        `row ${i}: column "${name}" holds a ${t} where earlier rows hold ${kind}s (one JSON type per column${isKey ? '; series-key values are strings' : ''})`,
      );
  }
  const validity = nulls === 0 ? null : new Uint8Array(n);
  const cell = (i: number): unknown => (events[i] as Record<string, unknown>)[name];
  if (validity !== null) for (let i = 0; i < n; i++) validity[i] = cell(i) === undefined || cell(i) === null ? 0 : 1;
  switch (kind) {
    case 'number': {
      const values = new Float64Array(n);
      for (let i = 0; i < n; i++) values[i] = (cell(i) as number | null | undefined) ?? 0;
      return { kind: 'float', name, values, validity };
    }
    case 'boolean': {
      const values = new Uint8Array(n);
      for (let i = 0; i < n; i++) values[i] = cell(i) === true ? 1 : 0;
      return { kind: 'bool', name, values, validity };
    }
    default: {
      const codes = new Int32Array(n);
      const codeOf = new Map<string, number>();
      const values: string[] = [];
      for (let i = 0; i < n; i++) {
        const v = cell(i);
        if (typeof v !== 'string') continue;
        let c = codeOf.get(v);
        if (c === undefined) {
          c = values.length;
          codeOf.set(v, c);
          values.push(v);
        }
        codes[i] = c;
      }
      return { kind: 'string', name, codes, dict: buildStringDictionary(values), validity };
    }
  }
}
