import { OpsError } from '../ops-errors.js';
import { allocValues, decodeArrowColumn, decodeValidityInto, decodeValuesInto, type ArrowColumn, type ValueArray } from './arrow-column.js';
import { indexTable } from './build-table.js';
import { allocCodes, widenCodes } from './code-width.js';
import type { CodeArray, Column } from './column.js';
import type { ArrowSnapshot, DecodedColumn } from './decode-arrow.js';
import { allocU8 } from './shared-memory.js';
import { inversePermutation, orderBySeriesAndDate } from './row-order.js';
import { scatter32 } from './scatter.js';
import { readPart, type SnapshotExpectations } from './read-part.js';
import { buildStringDictionary, compareUtf8 } from './string-dictionary.js';
import type { Table } from './table.js';
import { orderVersions } from './version-order.js';

/** The distinct values of one string column over the parts added so far, in order of first appearance. */
interface Strings {
  readonly values: string[];
  readonly codeOf: Map<string, number>;
}

/** A column of the generation: its values for every row of every part, filled part by part. */
interface Target {
  readonly arrow: ArrowColumn;
  /** strings: codes as narrow as the values seen so far allow, widened when a part brings more (code-width.ts) */
  values: ValueArray;
  /** allocated when the first part with a null in this column arrives (earlier rows are valid) */
  validity: Uint8Array | null;
  readonly strings: Strings | null;
}

/** The series of one part at its ends, for the order across parts (contract 14). */
interface PartEnds {
  readonly name: string;
  /** the key values of its first and last series */
  readonly first: readonly string[];
  readonly last: readonly string[];
}

/**
 * A generation built part by part (contract 14): its columns are allocated once, for every
 * row of the manifest, when the first part arrives, and each part is decoded straight into
 * its stretch of them, then dropped. Parts must be added in manifest order: all rows of a
 * series lie in one part and the parts come in series order, so part p's rows, sorted on
 * their own, are rows [start(p), start(p + 1)) of the table, and the series order across
 * parts is checked at each part's first series. So a load holds the new generation's
 * columns and the parts in flight, never all the parts' bytes nor a second copy of the table.
 *
 * Strings get one code space per column across parts (each distinct value stored once).
 */
export class PartAssembly {
  private readonly starts: number[] = [0];
  private next = 0;
  private schema: { readonly snap: ArrowSnapshot; readonly name: string } | null = null;
  private targets: Target[] = [];
  /** each part's series ranges, offset to the table's rows */
  private readonly seriesStarts: Int32Array[] = [];
  private seriesCount = 0;
  private minDate = Infinity;
  private maxDate = -Infinity;
  private lastEnds: PartEnds | null = null;

  constructor(private readonly want: SnapshotExpectations) {
    for (const p of want.parts) this.starts.push(this.starts[this.starts.length - 1]! + p.rows);
    if (this.rows > 0x7fff_ffff) throw new OpsError('snapshot_invalid', 'a generation holds more than 2^31 - 1 rows');
  }

  get rows(): number {
    return this.starts[this.starts.length - 1]!;
  }

  /**
   * Decodes the next part into the generation's columns. `verified`: its bytes were already
   * checked against the manifest's sha256 while they streamed in (load-generation.ts).
   * Throws an OpsError saying why the generation is refused.
   */
  add(bytes: Uint8Array, verified: boolean): void {
    const p = this.next;
    const want = this.want.parts[p];
    if (want === undefined) throw new Error(`PartAssembly: part ${p} of ${this.want.parts.length}`);
    const snap = readPart(bytes, want, !verified);
    if (this.schema === null) this.begin(snap, want.object);
    else if (snap.schemaText !== this.schema.snap.schemaText) {
      throw new OpsError('snapshot_invalid', `${want.object} has another schema than ${this.schema.name}: every part of a generation has the same schema`);
    }
    this.place(snap, this.starts[p]!, want.object);
    this.next++;
  }

  /** The serving table, once every part is in. */
  finish(): Table {
    if (this.next !== this.want.parts.length) throw new Error(`PartAssembly: ${this.next} of ${this.want.parts.length} parts added`);
    if (this.schema === null) throw new Error('PartAssembly: a generation has at least one part');
    const seriesStart = new Int32Array(this.seriesCount + 1);
    let s = 0;
    for (const starts of this.seriesStarts) {
      seriesStart.set(starts.subarray(0, starts.length - 1), s);
      s += starts.length - 1;
    }
    seriesStart[s] = this.rows;
    const columns = this.targets.map((t): Column => {
      const { arrow, values, validity } = t;
      const name = arrow.name;
      switch (arrow.kind) {
        case 'string':
          return { kind: 'string', name, validity, codes: values as CodeArray, dict: buildStringDictionary(t.strings!.values) };
        case 'timestamp':
          return { kind: 'timestamp', name, validity, unit: arrow.unit, values: values as Float64Array };
        default:
          return { kind: arrow.kind, name, validity, values } as Column;
      }
    });
    const empty = this.rows === 0;
    const minDate = empty ? 0 : this.minDate;
    const span = empty ? 1 : this.maxDate - this.minDate + 1;
    if (this.seriesCount * span >= 2 ** 53) throw new Error('date range too wide to index');
    const snap = this.schema.snap;
    return indexTable({
      rows: this.rows,
      seriesKey: snap.seriesKey,
      columns,
      fields: snap.fields,
      seriesStart,
      seriesCount: this.seriesCount,
      minDate,
      span,
      floorUs: this.want.floorUs,
    });
  }

  /** The first part sets the schema; the columns are allocated for every row of the generation. */
  private begin(snap: ArrowSnapshot, name: string): void {
    for (const f of this.want.filterColumns) {
      if (!snap.seriesKey.includes(f)) {
        throw new OpsError('filter_column_missing', `filter column "${f}" is not in the series key ${JSON.stringify(snap.seriesKey)}`);
      }
    }
    this.schema = { snap, name };
    this.targets = snap.columns.map((arrow) => ({
      arrow,
      values: arrow.kind === 'string' ? allocCodes(1, this.rows) : allocValues(arrow, this.rows),
      validity: null,
      strings: arrow.kind === 'string' ? { values: [], codeOf: new Map() } : null,
    }));
  }

  /** One part's rows, sorted into the physical order of table.ts, written at rows [at, at + its rows). */
  private place(snap: ArrowSnapshot, at: number, name: string): void {
    const n = snap.rows;
    if (n === 0) {
      this.seriesStarts.push(new Int32Array([at]));
      return;
    }
    const byName = new Map(snap.columns.map((c, i) => [c.name, i]));
    const targetOf = (column: string): Target => this.targets[byName.get(column)!]!;
    const columnOf = (column: string): ArrowColumn => snap.columns[byName.get(column)!]!;
    const slice = <T extends ValueArray | Uint8Array>(a: T): T => a.subarray(at, at + n) as T;

    // 1. Rows by (series, date), from the part's own codes and dates (series by the UTF-8 bytes of their key values).
    const seriesKey = snap.seriesKey;
    const local = seriesKey.map((k) => decodeArrowColumn(columnOf(k), null) as Extract<DecodedColumn, { kind: 'string' }>);
    const dates = slice(targetOf('date').values as Int32Array);
    decodeValuesInto(columnOf('date'), dates, null);
    const order = orderBySeriesAndDate(
      n,
      dates,
      local.map((c) => ({ codes: c.codes, cardinality: c.strings.length, rank: utf8Rank(c.strings) })),
    );
    const rank0 = order.perm === null ? null : inversePermutation(order.perm);
    if (rank0 !== null) {
      const inOrder = Int32Array.from(dates);
      scatter32(inOrder, dates, rank0, 0);
    }
    this.checkEnds(snap, name, order.perm, order.seriesStart, local);
    for (const [i, k] of seriesKey.entries()) {
      const t = targetOf(k);
      const toGlobal = this.globalCodes(t, local[i]!.strings, at);
      const codes = slice(t.values as CodeArray);
      const src = local[i]!.codes;
      for (let j = 0; j < n; j++) codes[rank0 === null ? j : rank0[j]!] = toGlobal[src[j]!]!;
    }

    // 2. Versions inside each key, by (observed, ingested, position).
    const observed = slice(targetOf('str_observed_at').values as Float64Array);
    const ingested = slice(targetOf('str_ingested_at').values as Float64Array);
    decodeValuesInto(columnOf('str_observed_at'), observed, rank0);
    decodeValuesInto(columnOf('str_ingested_at'), ingested, rank0);
    const { rank } = orderVersions(order.seriesStart, dates, observed, ingested, { perm: order.perm, rank: rank0 });

    // 3. Every other column, straight into its place (the columns above hold no nulls: contract 6).
    // Strings are decoded to the part's own codes in scratch of the part's size, then written as the column's.
    let scratch: Int32Array | null = null;
    const early = new Set(['date', 'str_observed_at', 'str_ingested_at', ...seriesKey]);
    for (const [i, c] of snap.columns.entries()) {
      if (early.has(c.name)) continue;
      const t = this.targets[i]!;
      if (c.hasNulls) {
        if (t.validity === null) t.validity = allocU8(this.rows).fill(1);
        decodeValidityInto(c.chunks, slice(t.validity), rank);
      }
      if (c.kind !== 'string') {
        decodeValuesInto(c, slice(t.values), rank);
        continue;
      }
      scratch ??= new Int32Array(n);
      const toGlobal = this.globalCodes(t, decodeValuesInto(c, scratch, rank)!, at);
      const codes = slice(t.values as CodeArray);
      for (let j = 0; j < n; j++) codes[j] = toGlobal[scratch[j]!]!;
    }

    const starts = order.seriesStart;
    for (let s = 0; s < starts.length; s++) starts[s]! += at;
    this.seriesStarts.push(starts);
    this.seriesCount += order.seriesCount;
    this.minDate = Math.min(this.minDate, order.minDate);
    this.maxDate = Math.max(this.maxDate, order.minDate + order.span - 1);
  }

  /**
   * Contract 14 at the seam with the part before: its last series sorts before this part's
   * first (equal: a series in two parts; after: parts out of order).
   */
  private checkEnds(
    snap: ArrowSnapshot,
    name: string,
    perm: Int32Array | null,
    seriesStart: Int32Array,
    local: ReadonlyArray<{ codes: Int32Array; strings: string[] }>,
  ): void {
    const valuesAt = (position: number): string[] => {
      const row = perm === null ? position : perm[position]!;
      return local.map((c) => c.strings[c.codes[row]!]!);
    };
    const ends: PartEnds = { name, first: valuesAt(0), last: valuesAt(seriesStart[seriesStart.length - 2]!) };
    const before = this.lastEnds;
    this.lastEnds = ends;
    if (before === null) return;
    const cmp = compareTuples(before.last, ends.first);
    const describe = (values: readonly string[]): string => JSON.stringify(Object.fromEntries(snap.seriesKey.map((k, i) => [k, values[i]])));
    if (cmp === 0) {
      throw new OpsError(
        'snapshot_invalid',
        `series ${describe(ends.first)} lies in two parts, ${before.name} and ${name}: all rows of a series must be in one part`,
      );
    }
    if (cmp > 0) {
      throw new OpsError('snapshot_invalid', `parts out of series order: series ${describe(ends.first)} is in ${name}, after a later series in ${before.name}`);
    }
  }

  /**
   * local code -> the column's code across parts (a value first seen here gets the next
   * one); the column's codes are widened first if the new values need it, its rows before
   * `filled` kept.
   */
  private globalCodes(t: Target, strings: readonly string[], filled: number): Int32Array {
    const into = t.strings!;
    const out = new Int32Array(strings.length);
    for (let c = 0; c < strings.length; c++) {
      const s = strings[c]!;
      let g = into.codeOf.get(s);
      if (g === undefined) {
        g = into.values.length;
        into.values.push(s);
        into.codeOf.set(s, g);
      }
      out[c] = g;
    }
    t.values = widenCodes(t.values as CodeArray, into.values.length, filled);
    return out;
  }
}

/** rank[code] = the position of strings[code] in UTF-8 byte order. */
function utf8Rank(strings: readonly string[]): Int32Array {
  const order = Array.from({ length: strings.length }, (_, i) => i).sort((a, b) => compareUtf8(strings[a]!, strings[b]!));
  const rank = new Int32Array(strings.length);
  order.forEach((code, r) => (rank[code] = r));
  return rank;
}

function compareTuples(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) {
    const c = compareUtf8(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return 0;
}
