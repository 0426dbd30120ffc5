/**
 * Small hand-written snapshots for the contract tests. Rows are written as readable
 * strings (dates, RFC 3339 instants) so that every expected value in a test can be derived
 * by reading the rows, not by asking the server.
 */
import { expect } from 'vitest';
import type { ColumnSpec, SnapshotSpec } from '../../src/snapshot/arrow-writer.js';
import type { Reply } from './harness.js';

/** Days since the epoch of a `YYYY-MM-DD` date (Arrow Date32). */
export function day(date: string): number {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(ms) || !/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error(`not a date: ${date}`);
  return ms / 86_400_000;
}

/**
 * Microseconds since the epoch of `YYYY-MM-DD` (its 00:00:00Z) or of an RFC 3339 instant with
 * `Z` and up to 6 fractional digits. Date.parse stops at milliseconds, so the fraction is
 * read by hand.
 */
export function micros(text: string): number {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return day(text) * 86_400_000_000;
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,6}))?Z$/.exec(text);
  if (m === null) throw new Error(`not an instant: ${text}`);
  return Date.parse(`${m[1]}Z`) * 1000 + Number((m[2] ?? '').padEnd(6, '0'));
}

/** One stored version, as a test writes it. */
export interface PitRow {
  /** business date */
  readonly date: string;
  /** str_effective_at: a date (its 00:00Z) or an instant */
  readonly eff: string;
  /** str_observed_at */
  readonly obs: string;
  /** str_ingested_at; defaults to `obs` */
  readonly ing?: string;
  /** series-key column values */
  readonly key?: Readonly<Record<string, string>>;
  /** a free label the tests read back to know which version they got */
  readonly tag: string;
  readonly value?: number | null;
}

export interface PitOptions {
  /** rows per record batch (several batches exercise "position in the snapshot" across batches) */
  readonly batchRows?: number;
  /** series-key columns as Dictionary<Utf8> instead of Utf8 */
  readonly dictionaryKeys?: boolean;
}

/**
 * A snapshot with the required columns (timestamps in µs), the series-key columns, then
 * `value` (Float64) and `tag` (Utf8), rows in the order given.
 */
export function pitSnapshot(seriesKey: readonly string[], rows: readonly PitRow[], opts: PitOptions = {}): SnapshotSpec {
  const keyType = opts.dictionaryKeys === true ? 'dict-utf8' : 'utf8';
  const columns: ColumnSpec[] = [
    { name: 'date', type: 'date32', values: rows.map((r) => day(r.date)) },
    { name: 'str_effective_at', type: 'timestamp', unit: 'us', values: rows.map((r) => micros(r.eff)) },
    { name: 'str_observed_at', type: 'timestamp', unit: 'us', values: rows.map((r) => micros(r.obs)) },
    { name: 'str_ingested_at', type: 'timestamp', unit: 'us', values: rows.map((r) => micros(r.ing ?? r.obs)) },
    { name: 'model_version', type: 'utf8', values: rows.map(() => '1.0') },
    ...seriesKey.map((k): ColumnSpec => ({
      name: k,
      type: keyType,
      values: rows.map((r) => {
        const v = r.key?.[k];
        if (v === undefined) throw new Error(`row ${r.tag} has no value for series-key column ${k}`);
        return v;
      }),
    })),
    { name: 'value', type: 'float64', values: rows.map((r) => r.value ?? null) },
    { name: 'tag', type: 'utf8', values: rows.map((r) => r.tag) },
  ];
  return { columns, seriesKey: [...seriesKey], ...(opts.batchRows === undefined ? {} : { batchRows: opts.batchRows }) };
}

/** A data row as parsed from a response. */
export type DataRow = Record<string, unknown>;

export function rowsOf(reply: Reply): DataRow[] {
  expect(reply.status, reply.text).toBe(200);
  expect(Array.isArray(reply.body?.data), reply.text).toBe(true);
  return reply.body.data as DataRow[];
}

/** The `tag` of each returned row, in response order. */
export function tagsOf(reply: Reply): string[] {
  return rowsOf(reply).map((r) => String(r['tag']));
}

/** The tag returned for one series (selected by its `case` column), or null when it has no row. */
export function tagOfCase(reply: Reply, name: string): string | null {
  const hits = rowsOf(reply).filter((r) => r['case'] === name);
  expect(hits.length, `case ${name} appears more than once`).toBeLessThanOrEqual(1);
  return hits.length === 0 ? null : String(hits[0]!['tag']);
}

export const RECORD_ID = /^req_[0-9a-z]{16,}$/;

/**
 * The error shape of contract 5: status, code, error.status, error.param (undefined when no
 * single parameter is at fault; pass `'any'` not to check it), record_id = x-request-id,
 * JSON content type.
 */
export function expectError(reply: Reply, status: number, code: string, param: string | undefined | 'any'): void {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.headers.get('content-type') ?? '').toMatch(/^application\/json\b/);
  expect(reply.body?.error?.status, reply.text).toBe(status);
  expect(reply.body.error.code, reply.text).toBe(code);
  expect(typeof reply.body.error.message).toBe('string');
  if (param !== 'any') expect(reply.body.error.param, reply.text).toBe(param);
  expect(reply.body.record_id).toMatch(RECORD_ID);
  expect(reply.headers.get('x-request-id')).toBe(reply.body.record_id);
}
