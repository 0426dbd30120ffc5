import { US_PER_DAY } from '../time/instant.js';
import { decodeArrowColumn, type ArrowColumn } from './arrow-column.js';
import { narrowCodes } from './code-width.js';
import type { Column, StringColumn, StringDictionary } from './column.js';
import type { ArrowSnapshot, DecodedColumn, DecodedSnapshot, StoredField } from './decode-arrow.js';
import { MinTree } from './min-tree.js';
import { copyDecoded, placeDecoded, sharedColumn } from './place-decoded.js';
import { inversePermutation, orderBySeriesAndDate, type SeriesOrder } from './row-order.js';
import { allocF64, allocI32, allocShared } from './shared-memory.js';
import { StepMax } from './step-max.js';
import { buildStringDictionary } from './string-dictionary.js';
import type { DayArray, Table } from './table.js';
import { orderVersions } from './version-order.js';

/** Columns the order of rows by (series, date) is computed from: decoded first, in snapshot order. */
const ORDER_COLUMNS = ['date'] as const;
/** Columns the order inside a key is computed from: decoded next, into (series, date) order. */
const VERSION_COLUMNS = ['str_observed_at', 'str_ingested_at'] as const;
/** Dates spanning more days than this build `latestDateByThr` by sorting. */
const DAY_STEPS_SPAN = 1 << 22;

type StringDecoded = Extract<DecodedColumn, { kind: 'string' }>;

/** Where a column comes from: Arrow record batches (decoded once, in place), or already decoded in snapshot order. */
type Source = { readonly arrow: ArrowColumn } | { readonly decoded: DecodedColumn };

/**
 * Checked snapshot -> a serving generation (see table.ts for the layout and why).
 * `floorUs` is the end of the product's vintage-floor day.
 *
 * Only the date and the series-key columns are decoded in snapshot order (the order is
 * computed from them, and they move as they are). Every other column is decoded once,
 * straight from its record batches into its place, so a snapshot is never held decoded in
 * snapshot order next to the table. A snapshot already in the physical order is not moved.
 */
export function buildTableFromArrow(snap: ArrowSnapshot, floorUs: number): Table {
  return assemble(
    snap.rows,
    snap.seriesKey,
    snap.columns.map((arrow) => ({ arrow })),
    floorUs,
    snap.fields,
  );
}

/** The same table from columns decoded in snapshot order (tools, benchmarks); they are not modified. */
export function buildTable(snap: DecodedSnapshot, floorUs: number): Table {
  return assemble(
    snap.rows,
    snap.seriesKey,
    snap.columns.map((decoded) => ({ decoded })),
    floorUs,
    snap.fields,
  );
}

function nameOf(s: Source): string {
  return 'arrow' in s ? s.arrow.name : s.decoded.name;
}

/** The column in snapshot order (a copy when it comes from Arrow). */
function inSnapshotOrder(s: Source): DecodedColumn {
  return 'arrow' in s ? decodeArrowColumn(s.arrow, null) : s.decoded;
}

/** The column moved to `rank` (null: kept in snapshot order), on shared memory; `fresh` when it will be written to. */
function placed(s: Source, rank: Int32Array | null, fresh: boolean): DecodedColumn {
  if ('arrow' in s) return decodeArrowColumn(s.arrow, rank);
  if (rank !== null) return placeDecoded(s.decoded, rank);
  return fresh ? copyDecoded(s.decoded) : sharedColumn(s.decoded);
}

function assemble(n: number, seriesKey: readonly string[], sources: readonly Source[], floorUs: number, fields: readonly StoredField[]): Table {
  const byName = new Map(sources.map((s) => [nameOf(s), s]));
  const dictionaries = new Map<string, StringDictionary>();
  const dictionaryOf = (c: StringDecoded): StringDictionary => {
    let d = dictionaries.get(c.name);
    if (d === undefined) dictionaries.set(c.name, (d = buildStringDictionary(c.strings)));
    return d;
  };
  const done = new Map<string, DecodedColumn>();

  // 1. Rows by (series rank, date); date and series-key values are equal inside a key, so
  // they are placed for good by this order.
  const early = new Map([...ORDER_COLUMNS, ...seriesKey].map((name) => [name, inSnapshotOrder(byName.get(name)!)]));
  const order = orderOf(n, seriesKey, early, dictionaryOf);
  const { seriesStart, seriesCount, minDate, span } = order;
  const rank0 = order.perm === null ? null : inversePermutation(order.perm);
  for (const [name, c] of early) done.set(name, rank0 === null ? sharedColumn(c) : placeDecoded(c, rank0));
  early.clear();

  // 2. Versions inside each key: observed and ingested are decoded into place and sorted there.
  for (const name of VERSION_COLUMNS) done.set(name, placed(byName.get(name)!, rank0, true));
  const date = (done.get('date') as { values: Int32Array }).values;
  const observedUs = (done.get('str_observed_at') as { values: Float64Array }).values;
  const ingestedUs = (done.get('str_ingested_at') as { values: Float64Array }).values;
  const { rank } = orderVersions(seriesStart, date, observedUs, ingestedUs, { perm: order.perm, rank: rank0 });

  // 3. Every other column, straight into its place.
  const columns: Column[] = sources.map((src) => {
    const name = nameOf(src);
    const c = done.get(name) ?? placed(src, rank, false);
    if (c.kind !== 'string') return c;
    const dict = dictionaryOf(c);
    return { kind: 'string', name: c.name, validity: c.validity, codes: narrowCodes(c.codes, dict.values.length), dict };
  });
  return indexTable({ rows: n, seriesKey, columns, fields, seriesStart, seriesCount, minDate, span, floorUs });
}

/** A table's columns in its physical order (table.ts), with its series ranges: all the rest is computed from them. */
export interface PlacedColumns {
  readonly rows: number;
  readonly seriesKey: readonly string[];
  /** every column, in schema order, rows in the physical order */
  readonly columns: readonly Column[];
  readonly fields: readonly StoredField[];
  /** series s owns rows [seriesStart[s], seriesStart[s+1]) */
  readonly seriesStart: Int32Array;
  readonly seriesCount: number;
  readonly minDate: number;
  /** maxDate - minDate + 1 */
  readonly span: number;
  readonly floorUs: number;
}

/** The keys, series ranges and visibility indexes of placed columns: the serving table. */
export function indexTable(p: PlacedColumns): Table {
  const { rows: n, seriesKey, columns, fields, seriesStart, seriesCount, minDate, span, floorUs } = p;
  const out = new Map(columns.map((c) => [c.name, c]));
  const date = (out.get('date') as { values: Int32Array }).values;
  const observedUs = (out.get('str_observed_at') as { values: Float64Array }).values;
  const ingestedUs = (out.get('str_ingested_at') as { values: Float64Array }).values;
  const eff = out.get('str_effective_at')!;
  let effectiveUs: Float64Array;
  if (eff.kind === 'date32') {
    effectiveUs = allocF64(n);
    for (let i = 0; i < n; i++) effectiveUs[i] = eff.values[i]! * US_PER_DAY;
  } else {
    effectiveUs = (eff as { values: Float64Array }).values;
  }

  // 4. Keys and series ranges, then the thresholds (visible under T iff T >= rowThr, table.ts).
  let keyCount = 0;
  for (let s = 0; s < seriesCount; s++) {
    for (let i = seriesStart[s]!; i < seriesStart[s + 1]!; i++) if (i === seriesStart[s] || date[i] !== date[i - 1]) keyCount++;
  }
  const keyRowStart = allocI32(keyCount + 1);
  const keyDate = allocDays(keyCount, minDate, minDate + span - 1);
  const keySeries = seriesCount <= 0x10000 ? allocShared(Uint16Array, keyCount) : allocI32(keyCount);
  const seriesKeyStart = allocI32(seriesCount + 1);
  let k = -1;
  for (let s = 0; s < seriesCount; s++) {
    seriesKeyStart[s] = k + 1;
    for (let i = seriesStart[s]!; i < seriesStart[s + 1]!; i++) {
      if (i === seriesStart[s] || date[i] !== date[i - 1]) {
        k++;
        keyRowStart[k] = i;
        keyDate[k] = date[i]!;
        keySeries[k] = s;
      }
    }
  }
  keyRowStart[keyCount] = n;
  seriesKeyStart[seriesCount] = keyCount;
  const vis = visibility({ rows: n, effectiveUs, observedUs, keyCount, keyRowStart, keyDate, minDate }, date, span, floorUs);

  const seriesColumns = seriesKey.map((name) => out.get(name) as StringColumn);
  let byteSize = 0;
  for (const c of columns) byteSize += columnBytes(c);
  if (eff.kind === 'date32') byteSize += effectiveUs.byteLength;
  byteSize += keyRowStart.byteLength + keyDate.byteLength + keySeries.byteLength + seriesKeyStart.byteLength + vis.byteSize;

  return {
    rows: n,
    columns,
    fields,
    seriesKey: [...seriesKey],
    seriesColumns,
    floorUs,
    minDate,
    effectiveUs,
    observedUs,
    ingestedUs,
    rowThr: vis.rowThr,
    seriesCount,
    seriesKeyStart,
    keyCount,
    keyRowStart,
    keyDate,
    keySeries,
    keyThr: vis.keyThr,
    keyThrTree: vis.keyThrTree,
    latestDateByThr: vis.latestDateByThr,
    maxObservedByThr: vis.maxObservedByThr,
    byteSize,
  };
}

/** Key dates in [lo, hi] as Int16 when they fit, else Int32 (table.ts). */
function allocDays(n: number, lo: number, hi: number): DayArray {
  return lo >= -0x8000 && hi <= 0x7fff ? allocShared(Int16Array, n) : allocI32(n);
}

/** What of a table follows from its vintage floor (table.ts): every threshold and what is indexed by them. */
type Visibility = Pick<Table, 'rowThr' | 'keyThr' | 'keyThrTree' | 'latestDateByThr' | 'maxObservedByThr' | 'byteSize'>;

/**
 * The thresholds of a table's rows and keys under vintage floor `floorUs`, and the indexes
 * over them: a version is visible under T iff T >= max(effective, observed) when observed
 * is after the floor, else T >= effective (table.ts). Keys and rows are those of the table.
 */
function visibility(
  t: Pick<Table, 'rows' | 'effectiveUs' | 'observedUs' | 'keyCount' | 'keyRowStart' | 'keyDate' | 'minDate'>,
  date: Int32Array,
  span: number,
  floorUs: number,
): Visibility {
  const { rows: n, effectiveUs, observedUs, keyCount, keyRowStart, keyDate } = t;
  const rowThr = allocF64(n);
  const keyThr = allocF64(keyCount);
  let minThr = Infinity;
  let maxThr = -Infinity;
  for (let k = 0; k < keyCount; k++) {
    let least = Infinity;
    for (let i = keyRowStart[k]!; i < keyRowStart[k + 1]!; i++) {
      const e = effectiveUs[i]!;
      const o = observedUs[i]!;
      const thr = o > floorUs && o > e ? o : e;
      rowThr[i] = thr;
      if (thr < least) least = thr;
      if (thr > maxThr) maxThr = thr;
    }
    keyThr[k] = least;
    if (least < minThr) minThr = least;
  }
  const keyThrTree = new MinTree(keyThr);
  // A key is visible once any of its rows is: over rows, the same steps as over keys.
  const latestDateByThr = span <= DAY_STEPS_SPAN ? StepMax.overDays(rowThr, date, t.minDate, span) : StepMax.build(keyThr, keyDate);
  const maxObservedByThr = StepMax.build(rowThr, observedUs, { min: minThr, max: maxThr });
  const byteSize = rowThr.byteLength + keyThr.byteLength + keyThrTree.byteSize + latestDateByThr.byteSize + maxObservedByThr.byteSize;
  return { rowThr, keyThr, keyThrTree, latestDateByThr, maxObservedByThr, byteSize };
}

/**
 * The same table under another vintage floor (a catalog changed it, contract 13): the
 * columns, keys and series are shared, only the thresholds and their indexes are computed
 * again (no decoding, no sorting: the rows' order does not depend on the floor).
 */
export function refloorTable(t: Table, floorUs: number): Table {
  const date = (t.columns.find((c) => c.name === 'date') as { values: Int32Array }).values;
  let maxDate = t.minDate;
  for (let k = 0; k < t.keyCount; k++) if (t.keyDate[k]! > maxDate) maxDate = t.keyDate[k]!;
  const vis = visibility(t, date, maxDate - t.minDate + 1, floorUs);
  const old = t.rowThr.byteLength + t.keyThr.byteLength + t.keyThrTree.byteSize + t.latestDateByThr.byteSize + t.maxObservedByThr.byteSize;
  return {
    ...t,
    floorUs,
    rowThr: vis.rowThr,
    keyThr: vis.keyThr,
    keyThrTree: vis.keyThrTree,
    latestDateByThr: vis.latestDateByThr,
    maxObservedByThr: vis.maxObservedByThr,
    byteSize: t.byteSize - old + vis.byteSize,
  };
}

function orderOf(
  n: number,
  seriesKey: readonly string[],
  early: ReadonlyMap<string, DecodedColumn>,
  dictionaryOf: (c: StringDecoded) => StringDictionary,
): SeriesOrder {
  const keys = seriesKey.map((k) => {
    const c = early.get(k) as StringDecoded;
    return { codes: c.codes, cardinality: c.strings.length, rank: dictionaryOf(c).rank };
  });
  return orderBySeriesAndDate(n, (early.get('date') as { values: Int32Array }).values, keys);
}

function columnBytes(c: Column): number {
  const v = c.validity?.byteLength ?? 0;
  if (c.kind === 'string') return v + c.codes.byteLength + c.dict.utf8.byteLength + c.dict.utf8Offsets.byteLength + c.dict.rank.byteLength;
  return v + c.values.byteLength;
}
