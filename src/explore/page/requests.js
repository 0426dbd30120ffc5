// @ts-check
/**
 * The API requests the explorer makes, as paths relative to the page (docs/explore.md).
 * Relative, so that the page also works behind a proxy that serves pitcache under a prefix.
 */
import { CURRENT } from './state.js';

/** The largest page the data endpoints give (contract 2). */
export const PAGE_LIMIT = 10000;

/** Days shown when the link names no dates: the last year the dataset holds. */
export const DEFAULT_DAYS = 365;

/**
 * @typedef {import('./series.js').CatalogEntry} CatalogEntry
 * @typedef {import('./state.js').ExploreState} ExploreState
 * @typedef {'json' | 'csv' | 'arrow'} Format
 */

/** `k=v&...`, each side percent-encoded. */
function query(/** @type {Array<[string, string]>} */ params) {
  return params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
}

/** The dataset's path, relative (`gbsi_eu/system_stress`). */
export function datasetPath(/** @type {CatalogEntry} */ entry) {
  return `${encodeURIComponent(entry.product_id)}/${encodeURIComponent(entry.dataset)}`;
}

/**
 * The series-key pairs the API can filter on (its filter parameters); the others are
 * picked out of the answer by the page.
 * @param {CatalogEntry} entry
 * @param {Array<[string, string]>} series
 * @returns {Array<[string, string]>}
 */
export function filterParams(entry, series) {
  const params = new Set(entry.filters.map((f) => f.param));
  return series.filter(([c]) => params.has(c));
}

/** `format=` for csv and arrow; json is the default the page reads. */
function formatParam(/** @type {Format} */ format) {
  return format === 'json' ? [] : /** @type {Array<[string, string]>} */ ([['format', format]]);
}

/**
 * The column as known at one `as_of` over the state's dates (`current`: no as_of).
 * @param {CatalogEntry} entry
 * @param {ExploreState} state  with its dates resolved
 * @param {string} asOf
 * @param {Format} format
 */
export function dataRequest(entry, state, asOf, format = 'json') {
  /** @type {Array<[string, string]>} */
  const params = [
    ...filterParams(entry, state.series),
    ['date_from', state.dateFrom],
    ['date_to', state.dateTo],
    ['columns', state.column],
    ['limit', String(PAGE_LIMIT)],
  ];
  if (asOf !== CURRENT) params.push(['as_of', asOf]);
  return `${datasetPath(entry)}?${query([...params, ...formatParam(format)])}`;
}

/**
 * Every version of one date of the series, with the interval each was the answer for.
 * @param {CatalogEntry} entry
 * @param {ExploreState} state
 * @param {string} date
 * @param {Format} format
 */
export function vintagesRequest(entry, state, date, format = 'json') {
  /** @type {Array<[string, string]>} */
  const params = [...filterParams(entry, state.series), ['date_from', date], ['date_to', date], ['columns', state.column], ['limit', String(PAGE_LIMIT)]];
  return `${datasetPath(entry)}/vintages?${query([...params, ...formatParam(format)])}`;
}

/** Each series' latest row, keys only: the series a user can pick. */
export function seriesRequest(/** @type {CatalogEntry} */ entry) {
  return `${datasetPath(entry)}?${query([
    ['latest', 'true'],
    ['columns', 'date'],
    ['limit', String(PAGE_LIMIT)],
  ])}`;
}

/** The same request for its next page. */
export function withCursor(/** @type {string} */ path, /** @type {string} */ cursor) {
  return `${path}&cursor=${encodeURIComponent(cursor)}`;
}

/**
 * The distinct series of some rows, as `[column, value]` pairs in series-key order, sorted.
 * @param {Array<Record<string, unknown>>} rows
 * @param {string[]} seriesKey
 * @returns {Array<Array<[string, string]>>}
 */
export function seriesChoices(rows, seriesKey) {
  const seen = new Map();
  for (const r of rows) {
    /** @type {Array<[string, string]>} */
    const pairs = seriesKey.map((c) => [c, String(r[c])]);
    const id = pairs.map(([c, v]) => `${c}:${v}`).join(';');
    if (!seen.has(id)) seen.set(id, pairs);
  }
  return [...seen.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((e) => e[1]);
}

/** `col:value;...`, as the URL writes a series (and as the page names it). */
export function seriesText(/** @type {Array<[string, string]>} */ series) {
  return series.map(([c, v]) => `${c}:${v}`).join(';');
}

/**
 * The dates to show: the state's, else the last DEFAULT_DAYS the dataset holds (its
 * date_max from the catalog), else the year up to `todayMs`.
 * @param {ExploreState} state
 * @param {CatalogEntry} entry
 * @param {number} todayMs
 * @returns {{ dateFrom: string, dateTo: string }}
 */
export function resolvedDates(state, entry, todayMs) {
  const dateTo = state.dateTo !== '' ? state.dateTo : (entry.date_max ?? new Date(todayMs).toISOString().slice(0, 10));
  if (state.dateFrom !== '') return { dateFrom: state.dateFrom, dateTo };
  const from = new Date(Date.parse(`${dateTo}T00:00:00Z`) - DEFAULT_DAYS * 86_400_000).toISOString().slice(0, 10);
  const dateMin = entry.date_min ?? null;
  return { dateFrom: dateMin !== null && dateMin > from ? dateMin : from, dateTo };
}
