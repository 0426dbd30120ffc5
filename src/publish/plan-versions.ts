import { orderBySeriesAndDate } from '../store/row-order.js';
import { floorToUnit } from './dataset-schema.js';
import type { IngestedRewrite } from './physical-order.js';
import { segmentKeys } from './segment-columns.js';
import { STAMP_COLUMNS, cellEquals, describeKey, instantsOf, type VersionTable } from './version-table.js';

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
  /** input rows to append, in input order */
  readonly appended: Int32Array;
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
 * ordered by (series, date) with the store's sort (stable), so each key's rows are one run,
 * stored versions first (in stored order), then the input's rows (in input order).
 */
export function planVersions(current: VersionTable | null, input: VersionTable, opts: PlanOptions): VersionPlan {
  const nc = current?.rows ?? 0;
  const segments =
    current === null
      ? [{ table: input, rows: null }]
      : [
          { table: current, rows: null },
          { table: input, rows: null },
        ];
  const { date, keys } = segmentKeys(segments, input.schema.seriesKey);
  const order = orderBySeriesAndDate(date.length, date, keys);
  const rowAt = (i: number): number => (order.perm === null ? i : order.perm[i]!);

  const obs = current === null ? null : instantsOf(current, 'str_observed_at');
  const ing = current === null ? null : instantsOf(current, 'str_ingested_at');
  const inObs = instantsOf(input, 'str_observed_at');
  const inIng = instantsOf(input, 'str_ingested_at');
  const compared = input.schema.columns.map((c, i) => i).filter((i) => !STAMP_COLUMNS.has(input.schema.columns[i]!.name));
  const ingestedDef = input.schema.columns.find((c) => c.name === 'str_ingested_at')!;
  const restamp = floorToUnit(opts.publishedAtUs, ingestedDef.unit ?? 'us');

  const append = new Uint8Array(input.rows);
  let rewrites: Uint8Array | null = null;
  let rewritten = 0;
  let newKeys = 0;
  let shadowed = 0;
  // The first input row that repeats a key (and the key's first row), and the first row whose
  // restamp would move time backwards: thrown after the walk, as a walk in input order would.
  let dupFirst = -1;
  let dupSecond = -1;
  let backwards = -1;
  let backwardsStored = -1;
  for (let s = 0; s < order.seriesCount; s++) {
    const end = order.seriesStart[s + 1]!;
    let a = order.seriesStart[s]!;
    while (a < end) {
      const d = date[rowAt(a)]!;
      let b = a + 1;
      while (b < end && date[rowAt(b)] === d) b++;
      // The key's current version: the greatest (observed, ingested), a later row winning a full tie.
      let stored = -1;
      let first = -1;
      let second = -1;
      for (let i = a; i < b; i++) {
        const row = rowAt(i);
        if (row < nc) {
          if (stored < 0 || obs![row]! > obs![stored]! || (obs![row] === obs![stored] && ing![row]! >= ing![stored]!)) stored = row;
        } else if (first < 0) first = row - nc;
        else if (second < 0) second = row - nc;
      }
      a = b;
      if (second >= 0) {
        if (dupSecond < 0 || second < dupSecond) {
          dupFirst = first;
          dupSecond = second;
        }
        continue;
      }
      if (first < 0) continue;
      const r = first;
      if (stored < 0) {
        append[r] = 1;
        newKeys++;
        continue;
      }
      if (!sameValues(current!, stored, input, r, compared)) {
        append[r] = 1;
        if (inObs[r]! < obs![stored]! || (inObs[r] === obs![stored] && inIng[r]! < ing![stored]!)) shadowed++;
        continue;
      }
      if (opts.rebuild && ing![stored] !== restamp) {
        // Moving a current version's ingested backwards could demote it below an older version.
        if (restamp < ing![stored]!) {
          if (backwards < 0 || r < backwards) {
            backwards = r;
            backwardsStored = stored;
          }
          continue;
        }
        rewrites ??= new Uint8Array(nc);
        rewrites[stored] = 1;
        rewritten++;
      }
    }
  }
  if (dupSecond >= 0) {
    throw new Error(
      `the input holds ${describeKey(input, dupSecond)} twice (rows ${dupFirst + 1} and ${dupSecond + 1}): recomputed rows have one row per key; to publish a whole snapshot as it is (a rollback), use --replace`,
    );
  }
  if (backwards >= 0) {
    throw new Error(`the publish time is before str_ingested_at of the stored ${describeKey(current!, backwardsStored)}: is the clock right?`);
  }
  let count = 0;
  for (let r = 0; r < input.rows; r++) count += append[r]!;
  const appended = new Int32Array(count);
  for (let r = 0, k = 0; r < input.rows; r++) if (append[r] === 1) appended[k++] = r;
  return { appended, ingestedRewrites: rewrites === null ? null : { rows: rewrites, us: restamp }, rewritten, newKeys, shadowed };
}

function sameValues(current: VersionTable, stored: number, input: VersionTable, r: number, compared: readonly number[]): boolean {
  for (const c of compared) if (!cellEquals(current.columns[c]!, stored, input.columns[c]!, r)) return false;
  return true;
}
