import type { Column, StringColumn } from './column.js';
import type { StoredField } from './decode-arrow.js';
import type { MinTree } from './min-tree.js';
import type { StepMax } from './step-max.js';

/**
 * A key's business date, days since the epoch: Int16 when every key's date fits (1880-04-
 * 14 to 2059-09-18), else Int32 (docs/snapshots.md#memory). Read as numbers; never written.
 */
export type DayArray = Int16Array | Int32Array;
/** A key's series: Uint16 up to 65,536 series, else Int32 (docs/snapshots.md#memory). */
export type SeriesArray = Uint16Array | Int32Array;

/**
 * One loaded generation of one dataset.
 *
 * Rows are physically sorted by (series rank, date, str_observed_at, str_ingested_at,
 * position in the snapshot). So the versions of one key are contiguous and already in
 * PIT-4 order, the keys of one series are contiguous and in date order, and the series are
 * in the contract's output order (series-key columns by UTF-8 byte order).
 *
 * Visibility is precomputed per version as one threshold: a version is visible under
 * `as_of` = T exactly when T >= thr, where thr = max(effective, observed) if observed is
 * after the vintage floor F, else effective. That is the contract's
 * `effective <= T && observed <= max(T, F)` folded into one number, so every question
 * ("the newest visible version of a key", "the last key of a series with any visible
 * version") becomes a search over one Float64Array.
 */
export interface Table {
  /** row-versions */
  readonly rows: number;
  /** every snapshot column, in schema order */
  readonly columns: readonly Column[];
  /** the columns as the snapshot stores them (Arrow type, nullable), in schema order: GET /catalog */
  readonly fields: readonly StoredField[];
  readonly seriesKey: readonly string[];
  /** the series-key columns, in declared order */
  readonly seriesColumns: readonly StringColumn[];
  /** vintage floor the thresholds were computed with: end of the floor day, µs */
  readonly floorUs: number;

  /** effective instant per row, µs (a Date32 effective column is its day's 00:00Z) */
  readonly effectiveUs: Float64Array;
  readonly observedUs: Float64Array;
  readonly ingestedUs: Float64Array;
  /** per-row visibility threshold (see above) */
  readonly rowThr: Float64Array;

  /** smallest business date of any row (days); with seriesCount it bounds (date, series) composites below 2^53 */
  readonly minDate: number;

  /** series s owns keys [seriesKeyStart[s], seriesKeyStart[s+1]) */
  readonly seriesCount: number;
  readonly seriesKeyStart: Int32Array;

  /** key k owns rows [keyRowStart[k], keyRowStart[k+1]) */
  readonly keyCount: number;
  readonly keyRowStart: Int32Array;
  /** business date (days since epoch) of key k */
  readonly keyDate: DayArray;
  /** series of key k */
  readonly keySeries: SeriesArray;
  /** min rowThr over the key's versions: the key has a visible version iff T >= keyThr[k] */
  readonly keyThr: Float64Array;
  /** over keyThr, keys in physical (series-major) order */
  readonly keyThrTree: MinTree;

  /** greatest key date with keyThr <= T: `metadata.data_latest_date` */
  readonly latestDateByThr: StepMax;
  /** greatest observed instant of a row with rowThr <= T: `metadata.data_age_hours` */
  readonly maxObservedByThr: StepMax;

  /** bytes held by this generation's arrays (for cache bounds and /admin/status) */
  readonly byteSize: number;
}
