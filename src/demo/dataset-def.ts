/** What one demo dataset is: its series, columns, publication timing and version history. */
import type { Rng } from './prng.js';

export type DemoValue = number | string | boolean | null;
/** One row's value columns, in the order of `DemoDatasetDef.valueColumns`. */
export type ValueRow = DemoValue[];

export interface DemoValueColumn {
  readonly name: string;
  readonly type: 'float64' | 'float32' | 'int32' | 'bool' | 'utf8' | 'dict-utf8';
  readonly description: string;
}

export interface DemoKeyColumn {
  readonly name: string;
  readonly type: 'utf8' | 'dict-utf8';
}

export interface DemoDatasetDef {
  readonly productId: string;
  readonly dataset: string;
  readonly description: string;
  /** Business dates: every day, or Fridays only (weekly reports). */
  readonly cadence: 'daily' | 'weekly-friday';
  /** Unit of the three str_* timestamps (str_effective_at too unless it is a date). */
  readonly timeUnit: 's' | 'ms' | 'us';
  readonly effectiveType: 'timestamp' | 'date32';
  /**
   * PIT-1: the row becomes effective `days` after its business date, at `releaseMinute`
   * (minutes after 00:00Z). A Date32 effective column keeps only the day.
   */
  readonly lag: { readonly days: number; readonly releaseMinute: number };
  /** First `str_observed_at` after the release, in minutes. */
  readonly observedDelayMinutes: readonly [number, number];
  readonly keyColumns: readonly DemoKeyColumn[];
  /** One entry per series: its key values, aligned with keyColumns. */
  readonly series: readonly (readonly string[])[];
  readonly valueColumns: readonly DemoValueColumn[];
  /** Share of live (post-floor) keys that get a restated version. */
  readonly revisionShare: number;
  /** A restatement arrives this many days after the first print. */
  readonly revisionDelayDays: readonly [number, number];
  /** Restatements come in whole steps (weekly reports restate in the next report). */
  readonly revisionStepDays?: number;
  /** Share of live keys with a second version at the same str_observed_at (PIT-4). */
  readonly tieShare?: number;
  /** A full rebuild this many days before the end date rewrote str_ingested_at (PIT-3). */
  readonly rebuildDaysBeforeEnd?: number;
  /** Values of every series on every business day: result[series][dayIndex]. */
  simulate(days: readonly number[], rng: Rng): ValueRow[][];
  /** A restated row of business day `day`: at least one value column must differ from `row`. */
  revise(row: ValueRow, series: number, rng: Rng, day: number): ValueRow;
}

/** Reads a number from a row built by the same dataset (the model knows the column types). */
export function num(row: ValueRow, i: number): number {
  const v = row[i];
  if (typeof v !== 'number') throw new Error(`demo row: column ${i} is not a number`);
  return v;
}
