import { floorToUnit } from './dataset-schema.js';
import { STAMP_COLUMNS, cellEquals, describeKey, instantsOf, keyReader, type VersionTable } from './version-table.js';

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
  /** stored row -> its new str_ingested_at in µs (already floored to the column's unit) */
  readonly ingestedRewrites: ReadonlyMap<number, number>;
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

export function planVersions(current: VersionTable | null, input: VersionTable, opts: PlanOptions): VersionPlan {
  const inputKey = keyReader(input);
  const seen = new Map<string, number>();
  for (let r = 0; r < input.rows; r++) {
    const key = inputKey(r);
    const first = seen.get(key);
    if (first !== undefined) {
      throw new Error(
        `the input holds ${describeKey(input, r)} twice (rows ${first + 1} and ${r + 1}): recomputed rows have one row per key; to publish a whole snapshot as it is (a rollback), use --replace`,
      );
    }
    seen.set(key, r);
  }
  if (current === null)
    return { appended: Int32Array.from({ length: input.rows }, (_, i) => i), ingestedRewrites: new Map(), newKeys: input.rows, shadowed: 0 };

  const obs = instantsOf(current, 'str_observed_at');
  const ing = instantsOf(current, 'str_ingested_at');
  const newest = currentVersions(current, obs, ing);
  const inObs = instantsOf(input, 'str_observed_at');
  const inIng = instantsOf(input, 'str_ingested_at');
  const compared = current.schema.columns.map((c, i) => i).filter((i) => !STAMP_COLUMNS.has(current.schema.columns[i]!.name));
  const ingestedDef = current.schema.columns.find((c) => c.name === 'str_ingested_at')!;
  const restamp = floorToUnit(opts.publishedAtUs, ingestedDef.unit ?? 'us');

  const appended: number[] = [];
  const ingestedRewrites = new Map<number, number>();
  let newKeys = 0;
  let shadowed = 0;
  for (let r = 0; r < input.rows; r++) {
    const stored = newest.get(inputKey(r));
    if (stored === undefined) {
      appended.push(r);
      newKeys++;
      continue;
    }
    const same = compared.every((c) => cellEquals(current.columns[c]!, stored, input.columns[c]!, r));
    if (!same) {
      appended.push(r);
      if (inObs[r]! < obs[stored]! || (inObs[r] === obs[stored] && inIng[r]! < ing[stored]!)) shadowed++;
      continue;
    }
    if (opts.rebuild && ing[stored] !== restamp) {
      // Moving a current version's ingested backwards could demote it below an older version.
      if (restamp < ing[stored]!) {
        throw new Error(`the publish time is before str_ingested_at of the stored ${describeKey(current, stored)}: is the clock right?`);
      }
      ingestedRewrites.set(stored, restamp);
    }
  }
  return { appended: Int32Array.from(appended), ingestedRewrites, newKeys, shadowed };
}

/** key -> row of its current version (PIT-4 with the position tie-break: a later row wins a full tie). */
function currentVersions(table: VersionTable, obs: Float64Array, ing: Float64Array): Map<string, number> {
  const keyOf = keyReader(table);
  const newest = new Map<string, number>();
  for (let r = 0; r < table.rows; r++) {
    const key = keyOf(r);
    const best = newest.get(key);
    if (best === undefined || obs[r]! > obs[best]! || (obs[r] === obs[best] && ing[r]! >= ing[best]!)) newest.set(key, r);
  }
  return newest;
}
