/**
 * @typedef {object} ExploreState
 * @property {string} product
 * @property {string} dataset
 * @property {Array<[string, string]>} series  series-key column and value, in the order given
 * @property {string} column
 * @property {string[]} asOf  `current` or an instant, in the order given, no duplicates
 * @property {string} dateFrom  `YYYY-MM-DD` or ''
 * @property {string} dateTo  `YYYY-MM-DD` or ''
 */
/** @returns {ExploreState} */
export function emptyState(): ExploreState;
/** An `as_of` entry the API would take: `current`, `YYYY-MM-DD` or an RFC 3339 instant. */
export function isAsOf(s: string): boolean;
/** A `YYYY-MM-DD` that names a real day. */
export function isDate(s: string): boolean;
/**
 * The state in a query string (`location.search`, with or without its `?`), and what was
 * wrong with it, in words for the page. Separators (`;` `:` `,`) are split before
 * percent-decoding, so a value holding one of them is written encoded. A `+` stays a `+`
 * (an instant's offset), not a space.
 * @param {string} search
 * @returns {{ state: ExploreState, problems: string[] }}
 */
export function parseState(search: string): {
    state: ExploreState;
    problems: string[];
};
/**
 * The query string (without `?`) of a state, in the contract's parameter order, empty
 * parameters left out, separators written bare: parseState(writeState(s)) gives s back.
 * @param {ExploreState} state
 */
export function writeState(state: ExploreState): string;
/**
 * The explorer's state, which lives in the URL query so that a view is a link
 * (docs/explore.md; the parameters are exactly those of the contract's section 17):
 * `product`, `dataset`, `series` (`col:value` pairs joined by `;`), `column`, `as_of` (up to
 * 8 instants joined by `,`; `current` means no as_of), `date_from`, `date_to`.
 *
 * Plain browser JavaScript (no build step): the server ships this file as it is.
 */
/** At most this many `as_of` lines on one chart. */
export const MAX_AS_OF: 8;
/** The `as_of` entry that means "no as_of": what is known now. */
export const CURRENT: "current";
export type ExploreState = {
    product: string;
    dataset: string;
    /**
     * series-key column and value, in the order given
     */
    series: Array<[string, string]>;
    column: string;
    /**
     * `current` or an instant, in the order given, no duplicates
     */
    asOf: string[];
    /**
     * `YYYY-MM-DD` or ''
     */
    dateFrom: string;
    /**
     * `YYYY-MM-DD` or ''
     */
    dateTo: string;
};
