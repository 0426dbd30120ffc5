import type { IngestedRewrite } from './build-snapshot.js';
import { describeChunkedKey, type ChunkedTable } from './chunked-table.js';
import { floorToUnit } from './dataset-schema.js';
import { orderWithinSeries } from './series-order.js';
import { SeriesRows, type Collected } from './series-rows.js';
import { STAMP_COLUMNS, cellEquals, columnIndex, type VersionTable } from './version-table.js';

/**
 * The state transition of spec section 3, applied to one publish of recomputed rows.
 *
 * For every input row, its key (series key + date) is compared with the key's CURRENT
 * stored version: the greatest by (str_observed_at, str_ingested_at, position), the
 * version a query without `as_of` would answer (PIT-4, contract 1).
 * - no stored version: the row is the key's first version;
 * - some value differs (every column but str_observed_at and str_ingested_at): the row is
 *   appended as a new version, its str_observed_at as given (PIT-2); the old one stays;
 * - every value is identical: nothing is added (history records revisions, not runs).
 *   With `rebuild` (PIT-3) the current version's str_ingested_at is rewritten to the
 *   publish time IN PLACE: a rebuild restamps the rows it rewrote, it is not a revision,
 *   so it must not add a version.
 *
 * Stored rows all stay, in their order; appended rows follow in input order, so the
 * position tie-break of PIT-4 lets a new version win a full (observed, ingested) tie.
 */
export interface VersionPlan {
  /** input rows to append (flagged 1, by row), in input order */
  readonly appended: Uint8Array;
  /** how many rows `appended` flags */
  readonly appendedCount: number;
  /** stored rows whose str_ingested_at becomes `us` (already floored to the column's unit); null when none */
  readonly ingestedRewrites: IngestedRewrite | null;
  /** how many stored rows `ingestedRewrites` flags */
  readonly rewritten: number;
  /** appended rows that are the first version of their key */
  readonly newKeys: number;
  /**
   * appended rows older by (observed, ingested) than the key's current version: stored, but
   * a current query keeps answering the old value (usually a stale input)
   */
  readonly shadowed: number;
}

export interface PlanOptions {
  readonly rebuild: boolean;
  /** the publish time, µs */
  readonly publishedAtUs: number;
}

/**
 * Keys are matched by sorting, not by a key per row: the stored rows then the input rows are
 * taken a range of series at a time (series-rows.ts: at most RANGE_SHARE of the rows, so the
 * scratch is bounded by the range) and ordered by (series, date), stably, so each key's rows
 * are one run, stored versions first (in stored order), then the input's rows (in input order).
 */
export function planVersions(current: ChunkedTable | null, input: ChunkedTable, opts: PlanOptions): VersionPlan {
  const nc = current?.rows ?? 0;
  const sources =
    current === null
      ? [{ table: input, picked: null }]
      : [
          { table: current, picked: null },
          { table: input, picked: null },
        ];
  const rows = new SeriesRows(sources, input.schema.seriesKey);
  const schema = input.schema;
  const ingestedDef = schema.columns.find((c) => c.name === 'str_ingested_at')!;
  const walk = new KeyWalk(rows, current !== null, {
    compared: schema.columns.map((_, i) => i).filter((i) => !STAMP_COLUMNS.has(schema.columns[i]!.name)),
    date: columnIndex(schema, 'date'),
    observed: columnIndex(schema, 'str_observed_at'),
    ingested: columnIndex(schema, 'str_ingested_at'),
    rebuild: opts.rebuild,
    restamp: floorToUnit(opts.publishedAtUs, ingestedDef.unit ?? 'us'),
    append: new Uint8Array(input.rows),
    nc,
  });
  const total = nc + input.rows;
  const most = Math.max(MIN_RANGE_ROWS, Math.ceil(total * RANGE_SHARE));
  let lo = 0;
  let size = 0;
  for (let r = 0; r <= rows.counts.length; r++) {
    if (r === rows.counts.length || (r > lo && size + rows.counts[r]! > most)) {
      if (r > lo) {
        const c = rows.collect(lo, r);
        orderWithinSeries(c, rows.chunks, { date: walk.by.date, stamps: null });
        walk.range(c);
      }
      lo = r;
      size = 0;
    }
    if (r < rows.counts.length) size += rows.counts[r]!;
  }
  const w = walk.found;
  if (w.dupSecond >= 0) {
    throw new Error(
      `the input holds ${describeChunkedKey(input, w.dupSecond)} twice (rows ${w.dupFirst + 1} and ${w.dupSecond + 1}): recomputed rows have one row per key; to publish a whole snapshot as it is (a rollback), use --replace`,
    );
  }
  if (w.backwards >= 0) {
    throw new Error(`the publish time is before str_ingested_at of the stored ${describeChunkedKey(current!, w.backwardsStored)}: is the clock right?`);
  }
  return {
    appended: walk.by.append,
    appendedCount: w.appended,
    ingestedRewrites: walk.rewrites === null ? null : { rows: walk.rewrites, us: walk.by.restamp },
    rewritten: w.rewritten,
    newKeys: w.newKeys,
    shadowed: w.shadowed,
  };
}

/** A range holds at most this share of the rows (so 1 / RANGE_SHARE passes over the key codes), */
const RANGE_SHARE = 1 / 16;
/** or this many rows, whichever is more. */
const MIN_RANGE_ROWS = 1 << 20;

interface WalkColumns {
  readonly compared: readonly number[];
  readonly date: number;
  readonly observed: number;
  readonly ingested: number;
  readonly rebuild: boolean;
  readonly restamp: number;
  readonly append: Uint8Array;
  readonly nc: number;
}

/** The keys of each range in turn, against their current versions; what it finds adds up over the ranges. */
class KeyWalk {
  rewrites: Uint8Array | null = null;
  // The first input row that repeats a key (and the key's first row), and the first row whose
  // restamp would move time backwards: thrown after the walk, as a walk in input order would.
  readonly found = { appended: 0, rewritten: 0, newKeys: 0, shadowed: 0, dupFirst: -1, dupSecond: -1, backwards: -1, backwardsStored: -1 };
  private readonly dates: Int32Array[];
  private readonly obs: Float64Array[];
  private readonly ing: Float64Array[];

  constructor(
    private readonly rows: SeriesRows,
    private readonly stored: boolean,
    readonly by: WalkColumns,
  ) {
    this.dates = rows.chunks.map((ch) => (ch.columns[by.date] as { values: Int32Array }).values);
    this.obs = rows.chunks.map((ch) => (ch.columns[by.observed] as { values: Float64Array }).values);
    this.ing = rows.chunks.map((ch) => (ch.columns[by.ingested] as { values: Float64Array }).values);
  }

  range(c: Collected): void {
    const { order, seriesStart, chunkOf, rowOf } = c;
    const { chunkSource, chunkFirst, chunks } = this.rows;
    const { dates, obs, ing, found, by } = this;
    for (let s = 0; s + 1 < seriesStart.length; s++) {
      const end = seriesStart[s + 1]!;
      let a = seriesStart[s]!;
      while (a < end) {
        const d = dates[chunkOf[order[a]!]!]![rowOf[order[a]!]!]!;
        let b = a + 1;
        while (b < end && dates[chunkOf[order[b]!]!]![rowOf[order[b]!]!] === d) b++;
        // The key's current version: the greatest (observed, ingested), a later row winning a full tie.
        let stored = -1;
        let first = -1;
        let second = -1;
        for (let i = a; i < b; i++) {
          const j = order[i]!;
          if (this.stored && chunkSource[chunkOf[j]!] === 0) {
            if (stored < 0) stored = j;
            else {
              const oj = obs[chunkOf[j]!]![rowOf[j]!]!;
              const os = obs[chunkOf[stored]!]![rowOf[stored]!]!;
              if (oj > os || (oj === os && ing[chunkOf[j]!]![rowOf[j]!]! >= ing[chunkOf[stored]!]![rowOf[stored]!]!)) stored = j;
            }
          } else if (first < 0) first = j;
          else if (second < 0) second = j;
        }
        a = b;
        const inputRow = (j: number): number => chunkFirst[chunkOf[j]!]! + rowOf[j]!;
        if (second >= 0) {
          const r2 = inputRow(second);
          if (found.dupSecond < 0 || r2 < found.dupSecond) {
            found.dupFirst = inputRow(first);
            found.dupSecond = r2;
          }
          continue;
        }
        if (first < 0) continue;
        const r = inputRow(first);
        if (stored < 0) {
          by.append[r] = 1;
          found.appended++;
          found.newKeys++;
          continue;
        }
        const sk = chunkOf[stored]!;
        const sr = rowOf[stored]!;
        const fk = chunkOf[first]!;
        const fr = rowOf[first]!;
        if (!sameValues(chunks[sk]!, sr, chunks[fk]!, fr, by.compared)) {
          by.append[r] = 1;
          found.appended++;
          const oi = obs[fk]![fr]!;
          const os = obs[sk]![sr]!;
          if (oi < os || (oi === os && ing[fk]![fr]! < ing[sk]![sr]!)) found.shadowed++;
          continue;
        }
        const storedIng = ing[sk]![sr]!;
        if (by.rebuild && storedIng !== by.restamp) {
          const storedRow = chunkFirst[sk]! + sr;
          // Moving a current version's ingested backwards could demote it below an older version.
          if (by.restamp < storedIng) {
            if (found.backwards < 0 || r < found.backwards) {
              found.backwards = r;
              found.backwardsStored = storedRow;
            }
            continue;
          }
          this.rewrites ??= new Uint8Array(by.nc);
          this.rewrites[storedRow] = 1;
          found.rewritten++;
        }
      }
    }
  }
}

function sameValues(current: VersionTable, stored: number, input: VersionTable, r: number, compared: readonly number[]): boolean {
  for (const c of compared) if (!cellEquals(current.columns[c]!, stored, input.columns[c]!, r)) return false;
  return true;
}
