/** How a JSON page's cell reads in the other formats (contract 9): what csv-parse and apache-arrow hand back for it. */
import { micros } from './fixtures.js';

export type Json = string | number | boolean | null;

/** A JSON cell in the text CSV must carry for it (contract 9): null -> '', the rest as written without quotes. */
export function csvText(v: Json): string {
  return v === null ? '' : String(v);
}

/** What the same cell reads as from apache-arrow, in JSON's terms. */
export function fromArrow(v: unknown, type: string, json: Json): Json {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number' && !Number.isFinite(v)) return null; // NaN and infinities render null in JSON
  if (type.startsWith('Date32')) return new Date(v as number).toISOString().slice(0, 10);
  if (type.startsWith('Timestamp')) return typeof json === 'string' && Math.round((v as number) * 1000) === micros(json) ? json : `${String(v)} ms`;
  if (typeof v === 'bigint') return v >= -(2n ** 53n) && v <= 2n ** 53n ? Number(v) : String(v); // contract 4: beyond 2^53, a string
  return v as Json;
}
