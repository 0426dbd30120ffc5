import type { KeyCodes } from '../store/row-order.js';
import { compareUtf8 } from '../store/string-dictionary.js';
import { columnOf, instantsOf, type VersionTable } from './version-table.js';

/** Some rows of a table (all of them when `rows` is null), in that order. */
export interface Segment {
  readonly table: VersionTable;
  readonly rows: Int32Array | null;
}

export function segmentRows(seg: Segment): number {
  return seg.rows?.length ?? seg.table.rows;
}

/** One code space for a string column over several tables: each distinct value once, `remaps[k][code in table k]`. */
export interface UnifiedStrings {
  readonly values: string[];
  readonly remaps: Int32Array[];
}

export function unifyStrings(tables: readonly VersionTable[], name: string): UnifiedStrings {
  const values: string[] = [];
  const codeOf = new Map<string, number>();
  const remaps = tables.map((t) => {
    const c = columnOf(t, name);
    if (c.kind !== 'string') throw new Error(`column "${name}" must be a string column`);
    const remap = new Int32Array(c.strings.length);
    for (let k = 0; k < c.strings.length; k++) {
      const s = c.strings[k]!;
      let code = codeOf.get(s);
      if (code === undefined) codeOf.set(s, (code = values.push(s) - 1));
      remap[k] = code;
    }
    return remap;
  });
  return { values, remaps };
}

/**
 * The series-key columns and dates of the segments' rows, one after the other, as the
 * store's sort takes them: codes of one code space per key column, ranked by UTF-8 bytes.
 * Typed arrays only: no key per row.
 */
export function segmentKeys(segments: readonly Segment[], seriesKey: readonly string[]): { date: Int32Array; keys: KeyCodes[] } {
  const n = segments.reduce((sum, s) => sum + segmentRows(s), 0);
  const date = new Int32Array(n);
  let o = 0;
  for (const seg of segments) {
    const days = columnOf(seg.table, 'date');
    if (days.kind !== 'date32') throw new Error('column "date" must be Date32');
    o = gather(days.values, seg.rows, date, o);
  }
  const keys = seriesKey.map((name): KeyCodes => {
    const unified = unifyStrings(
      segments.map((s) => s.table),
      name,
    );
    const codes = new Int32Array(n);
    let at = 0;
    segments.forEach((seg, k) => {
      const c = columnOf(seg.table, name);
      if (c.kind !== 'string') throw new Error(`series-key column "${name}" must be a string column`);
      const remap = unified.remaps[k]!;
      const count = segmentRows(seg);
      for (let i = 0; i < count; i++) codes[at + i] = remap[c.codes[seg.rows === null ? i : seg.rows[i]!]!]!;
      at += count;
    });
    return { codes, cardinality: unified.values.length, rank: utf8Ranks(unified.values) };
  });
  return { date, keys };
}

/** str_observed_at or str_ingested_at (µs) of the segments' rows, one after the other. */
export function segmentInstants(segments: readonly Segment[], name: string): Float64Array {
  const out = new Float64Array(segments.reduce((sum, s) => sum + segmentRows(s), 0));
  let o = 0;
  for (const seg of segments) o = gather(instantsOf(seg.table, name), seg.rows, out, o);
  return out;
}

function gather<T extends Int32Array | Float64Array>(src: T, rows: Int32Array | null, out: T, at: number): number {
  if (rows === null) {
    out.set(src, at);
    return at + src.length;
  }
  for (let i = 0; i < rows.length; i++) out[at + i] = src[rows[i]!]!;
  return at + rows.length;
}

/** rank[code] of each distinct value, by UTF-8 byte order. */
function utf8Ranks(values: readonly string[]): Int32Array {
  const order = values.map((_, i) => i).sort((a, b) => compareUtf8(values[a]!, values[b]!));
  const rank = new Int32Array(values.length);
  order.forEach((code, r) => (rank[code] = r));
  return rank;
}
