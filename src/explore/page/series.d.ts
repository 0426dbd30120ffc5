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
export function chartableColumns(entry: CatalogEntry): string[];
/**
 * The instant an `as_of` stands for, in ms: `current` is +Infinity (newest of all); a
 * `YYYY-MM-DD` is the end of that UTC day (the API's rule).
 */
export function asOfMillis(asOf: string): number;
/** A `YYYY-MM-DD` as Unix seconds at 00:00Z (the chart's x). */
export function dateSeconds(date: string): number;
/** A cell as a number for the chart: numbers, numeric strings (64-bit integers); anything else is a gap. */
export function cellNumber(v: unknown): number | null;
/** The rows of one series: every `[column, value]` pair matches (compared as text). */
export function rowsOfSeries(rows: Row[], series: Array<[string, string]>): Record<string, unknown>[];
/** The legend's words for one line. */
export function legendLabel(asOf: string, floorApplied: boolean): string;
/**
 * One line per answer over the union of their dates. Lines are in draw order: the
 * newest `as_of` (`current`) first, so that it lies at the bottom, widest; each older one
 * is drawn above it, thinner, so a line that coincides with a newer one (a date never
 * revised) still shows as a band of both colours.
 * @param {AsOfAnswer[]} answers
 * @param {string} column
 * @returns {Chart}
 */
export function chartSeries(answers: AsOfAnswer[], column: string): Chart;
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
export function revisionSteps(rows: Row[], column: string, nowMs: number): RevisionSteps;
/** Colours of the lines, in draw order (Paul Tol's muted scheme: distinct for colour-blind readers too). */
export const COLOURS: string[];
export type CatalogColumn = {
    name: string;
    /**
     * apache-arrow's DataType#toString()
     */
    type: string;
    nullable: boolean;
};
/**
 * one dataset of GET /catalog
 */
export type CatalogEntry = {
    product_id: string;
    dataset: string;
    product_name?: string | undefined;
    description?: string | undefined;
    floor: string | null;
    filters: Array<{
        param: string;
        allowed: string[] | null;
    }>;
    /**
     * null while the dataset is not loaded
     */
    series_key: string[] | null;
    /**
     * null while the dataset is not loaded
     */
    columns: CatalogColumn[] | null;
    state?: string | undefined;
    date_min?: string | null | undefined;
    date_max?: string | null | undefined;
};
export type Row = Record<string, unknown>;
/**
 * the rows one `as_of` answered with
 */
export type AsOfAnswer = {
    /**
     * `current` or the instant as the user gave it
     */
    asOf: string;
    rows: Row[];
    /**
     * the answer's metadata.floor_applied
     */
    floorApplied: boolean;
};
export type Line = {
    asOf: string;
    /**
     * the legend's text
     */
    label: string;
    colour: string;
    /**
     * px
     */
    width: number;
    floorApplied: boolean;
    /**
     * one per x
     */
    values: Array<number | null>;
};
export type Chart = {
    /**
     * the dates, as Unix seconds at 00:00Z, ascending
     */
    x: number[];
    /**
     * in draw order: newest first (bottom), oldest last (on top)
     */
    lines: Line[];
};
/**
 * one row of a date's revision history
 */
export type Revision = {
    value: number | null;
    visibleFrom: string;
    /**
     * null: still the answer
     */
    visibleTo: string | null;
};
export type RevisionSteps = {
    /**
     * Unix seconds: each version's visible_from, then where the line of the last one ends
     */
    x: number[];
    y: Array<number | null>;
    /**
     * by visible_from
     */
    table: Revision[];
};
