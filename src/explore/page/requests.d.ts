/** The dataset's path, relative (`gbsi_eu/system_stress`). */
export function datasetPath(entry: CatalogEntry): string;
/**
 * The series-key pairs the API can filter on (its filter parameters); the others are
 * picked out of the answer by the page.
 * @param {CatalogEntry} entry
 * @param {Array<[string, string]>} series
 * @returns {Array<[string, string]>}
 */
export function filterParams(entry: CatalogEntry, series: Array<[string, string]>): Array<[string, string]>;
/**
 * The column as known at one `as_of` over the state's dates (`current`: no as_of).
 * @param {CatalogEntry} entry
 * @param {ExploreState} state  with its dates resolved
 * @param {string} asOf
 * @param {Format} format
 */
export function dataRequest(entry: CatalogEntry, state: ExploreState, asOf: string, format?: Format): string;
/**
 * Every version of one date of the series, with the interval each was the answer for.
 * @param {CatalogEntry} entry
 * @param {ExploreState} state
 * @param {string} date
 * @param {Format} format
 */
export function vintagesRequest(entry: CatalogEntry, state: ExploreState, date: string, format?: Format): string;
/** Each series' latest row, keys only: the series a user can pick. */
export function seriesRequest(entry: CatalogEntry): string;
/** The same request for its next page. */
export function withCursor(path: string, cursor: string): string;
/**
 * The distinct series of some rows, as `[column, value]` pairs in series-key order, sorted.
 * @param {Array<Record<string, unknown>>} rows
 * @param {string[]} seriesKey
 * @returns {Array<Array<[string, string]>>}
 */
export function seriesChoices(rows: Array<Record<string, unknown>>, seriesKey: string[]): Array<Array<[string, string]>>;
/** `col:value;...`, as the URL writes a series (and as the page names it). */
export function seriesText(series: Array<[string, string]>): string;
/**
 * The dates to show: the state's, else the last DEFAULT_DAYS the dataset holds (its
 * date_max from the catalog), else the year up to `todayMs`.
 * @param {ExploreState} state
 * @param {CatalogEntry} entry
 * @param {number} todayMs
 * @returns {{ dateFrom: string, dateTo: string }}
 */
export function resolvedDates(state: ExploreState, entry: CatalogEntry, todayMs: number): {
    dateFrom: string;
    dateTo: string;
};
/** The largest page the data endpoints give (contract 2). */
export const PAGE_LIMIT: 10000;
/** Days shown when the link names no dates: the last year the dataset holds. */
export const DEFAULT_DAYS: 365;
export type CatalogEntry = import("./series.js").CatalogEntry;
export type ExploreState = import("./state.js").ExploreState;
export type Format = "json" | "csv" | "arrow";
