// @ts-check
/**
 * API answers -> chart series, for the explorer (docs/explore.md). Pure functions, no DOM:
 * the unit tests run them as the page does.
 */
import { CURRENT } from './state.js';

/** Colours of the lines, in draw order (Paul Tol's muted scheme: distinct for colour-blind readers too). */
export const COLOURS = ['#332288', '#CC6677', '#117733', '#DDCC77', '#88CCEE', '#882255', '#44AA99', '#999933', '#AA4499'];

/** Widest line (drawn first, at the bottom) and thinnest (drawn last, on top), px. */
const WIDEST = 8;
const THINNEST = 2;

const NUMERIC = /^(Float(16|32|64)|Int(8|16|32|64)|Uint(8|16|32|64))$/;

/**
 * @typedef {object} CatalogColumn
 * @property {string} name
 * @property {string} type  apache-arrow's DataType#toString()
 * @property {boolean} nullable
 *
 * @typedef {object} CatalogEntry  one dataset of GET /catalog
 * @property {string} product_id
 * @property {string} dataset
 * @property {string} [product_name]
 * @property {string} [description]
 * @property {string | null} floor
 * @property {Array<{ param: string, allowed: string[] | null }>} filters
 * @property {string[] | null} series_key  null while the dataset is not loaded
 * @property {CatalogColumn[] | null} columns  null while the dataset is not loaded
 * @property {string} [state]
 * @property {string | null} [date_min]
 * @property {string | null} [date_max]
 *
 * @typedef {Record<string, unknown>} Row
 *
 * @typedef {object} AsOfAnswer  the rows one `as_of` answered with
 * @property {string} asOf  `current` or the instant as the user gave it
 * @property {Row[]} rows
 * @property {boolean} floorApplied  the answer's metadata.floor_applied
 *
 * @typedef {object} Line
 * @property {string} asOf
 * @property {string} label  the legend's text
 * @property {string} colour
 * @property {number} width  px
 * @property {boolean} floorApplied
 * @property {Array<number | null>} values  one per x
 *
 * @typedef {object} Chart
 * @property {number[]} x  the dates, as Unix seconds at 00:00Z, ascending
 * @property {Line[]} lines  in draw order: newest first (bottom), oldest last (on top)
 */

/** The columns a line can be drawn of: numeric, neither `date` nor part of the series key. */
export function chartableColumns(/** @type {CatalogEntry} */ entry) {
  const key = entry.series_key ?? [];
  return (entry.columns ?? []).filter((c) => NUMERIC.test(c.type) && c.name !== 'date' && !key.includes(c.name)).map((c) => c.name);
}

/**
 * The instant an `as_of` stands for, in ms: `current` is +Infinity (newest of all); a
 * `YYYY-MM-DD` is the end of that UTC day (the API's rule).
 */
export function asOfMillis(/** @type {string} */ asOf) {
  if (asOf === CURRENT) return Number.POSITIVE_INFINITY;
  if (asOf.length === 10) return Date.parse(`${asOf}T23:59:59.999Z`);
  return Date.parse(asOf);
}

/** A `YYYY-MM-DD` as Unix seconds at 00:00Z (the chart's x). */
export function dateSeconds(/** @type {string} */ date) {
  return Date.parse(`${date}T00:00:00Z`) / 1000;
}

/** A cell as a number for the chart: numbers, numeric strings (64-bit integers); anything else is a gap. */
export function cellNumber(/** @type {unknown} */ v) {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  }
  return null;
}

/** The rows of one series: every `[column, value]` pair matches (compared as text). */
export function rowsOfSeries(/** @type {Row[]} */ rows, /** @type {Array<[string, string]>} */ series) {
  if (series.length === 0) return rows;
  return rows.filter((r) => series.every(([c, v]) => String(r[c]) === v));
}

/** The legend's words for one line. */
export function legendLabel(/** @type {string} */ asOf, /** @type {boolean} */ floorApplied) {
  const name = asOf === CURRENT ? 'current (no as_of)' : `as_of ${asOf}`;
  return floorApplied ? `${name}: before the vintage floor, shows the state held at the floor` : name;
}

/**
 * One line per answer over the union of their dates. Lines are in draw order: the
 * newest `as_of` (`current`) first, so that it lies at the bottom, widest; each older one
 * is drawn above it, thinner, so a line that coincides with a newer one (a date never
 * revised) still shows as a band of both colours.
 * @param {AsOfAnswer[]} answers
 * @param {string} column
 * @returns {Chart}
 */
export function chartSeries(answers, column) {
  const days = new Set();
  for (const a of answers) for (const r of a.rows) if (typeof r.date === 'string') days.add(r.date);
  const dates = [...days].sort();
  const index = new Map(dates.map((d, i) => [d, i]));
  const ordered = [...answers].sort((a, b) => asOfMillis(b.asOf) - asOfMillis(a.asOf));
  const n = ordered.length;
  const step = n > 1 ? Math.min(3, (WIDEST - THINNEST) / (n - 1)) : 0;
  const lines = ordered.map((a, i) => {
    /** @type {Array<number | null>} */
    const values = new Array(dates.length).fill(null);
    for (const r of a.rows) {
      const at = typeof r.date === 'string' ? index.get(r.date) : undefined;
      if (at !== undefined) values[at] = cellNumber(r[column]);
    }
    return {
      asOf: a.asOf,
      label: legendLabel(a.asOf, a.floorApplied),
      colour: COLOURS[i % COLOURS.length] ?? '#000',
      width: THINNEST + (n - 1 - i) * step,
      floorApplied: a.floorApplied,
      values,
    };
  });
  return { x: dates.map(dateSeconds), lines };
}

/**
 * @typedef {object} Revision  one row of a date's revision history
 * @property {number | null} value
 * @property {string} visibleFrom
 * @property {string | null} visibleTo  null: still the answer
 *
 * @typedef {object} RevisionSteps
 * @property {number[]} x  Unix seconds: each version's visible_from, then where the line of the last one ends
 * @property {Array<number | null>} y
 * @property {Revision[]} table  by visible_from
 */

/** The shortest stretch the step line runs past the last version still the answer, ms. */
const MIN_TAIL_MS = 7 * 86_400_000;

/**
 * A date's revision history (the rows of GET .../vintages for one date and series) as a
 * step line of value over visible_from: each version holds until the next one's
 * visible_from. The last one holds until its visible_to; while it is still the answer, the
 * line runs on past it as far as the history before it spans (at least 7 days, never past
 * `nowMs`), so that the revisions, not the months since, fill the chart (the table says
 * "still the answer").
 * @param {Row[]} rows
 * @param {string} column
 * @param {number} nowMs
 * @returns {RevisionSteps}
 */
export function revisionSteps(rows, column, nowMs) {
  const table = rows
    .filter((r) => typeof r.visible_from === 'string')
    .map((r) => ({
      value: cellNumber(r[column]),
      visibleFrom: /** @type {string} */ (r.visible_from),
      visibleTo: typeof r.visible_to === 'string' ? r.visible_to : null,
    }))
    .sort((a, b) => Date.parse(a.visibleFrom) - Date.parse(b.visibleFrom));
  const from = table.map((t) => Date.parse(t.visibleFrom));
  const x = from.map((ms) => ms / 1000);
  const y = table.map((t) => t.value);
  const last = table[table.length - 1];
  if (last !== undefined) {
    const first = /** @type {number} */ (from[0]);
    const lastFrom = /** @type {number} */ (from[from.length - 1]);
    const endMs = last.visibleTo !== null ? Date.parse(last.visibleTo) : Math.min(nowMs, lastFrom + Math.max(MIN_TAIL_MS, lastFrom - first));
    x.push(Math.max(endMs, lastFrom) / 1000);
    y.push(last.value);
  }
  return { x, y, table };
}
