// @ts-check
/**
 * The explorer's state, which lives in the URL query so that a view is a link
 * (docs/explore.md; the parameters are exactly those of the contract's section 17):
 * `product`, `dataset`, `series` (`col:value` pairs joined by `;`), `column`, `as_of` (up to
 * 8 instants joined by `,`; `current` means no as_of), `date_from`, `date_to`.
 *
 * Plain browser JavaScript (no build step): the server ships this file as it is.
 */

/** At most this many `as_of` lines on one chart. */
export const MAX_AS_OF = 8;

/** The `as_of` entry that means "no as_of": what is known now. */
export const CURRENT = 'current';

const DATE = /^\d{4}-\d{2}-\d{2}$/;
/** RFC 3339 with `Z` or an offset (the API checks the rest; this only catches typing slips). */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

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
export function emptyState() {
  return { product: '', dataset: '', series: [], column: '', asOf: [], dateFrom: '', dateTo: '' };
}

/** An `as_of` entry the API would take: `current`, `YYYY-MM-DD` or an RFC 3339 instant. */
export function isAsOf(/** @type {string} */ s) {
  return s === CURRENT || DATE.test(s) || INSTANT.test(s);
}

/** A `YYYY-MM-DD` that names a real day. */
export function isDate(/** @type {string} */ s) {
  if (!DATE.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** decodeURIComponent that keeps a malformed escape as typed instead of throwing. */
function decode(/** @type {string} */ s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The state in a query string (`location.search`, with or without its `?`), and what was
 * wrong with it, in words for the page. Separators (`;` `:` `,`) are split before
 * percent-decoding, so a value holding one of them is written encoded. A `+` stays a `+`
 * (an instant's offset), not a space.
 * @param {string} search
 * @returns {{ state: ExploreState, problems: string[] }}
 */
export function parseState(search) {
  const state = emptyState();
  /** @type {string[]} */
  const problems = [];
  const query = search.startsWith('?') ? search.slice(1) : search;
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    const raw = eq < 0 ? '' : part.slice(eq + 1);
    switch (name) {
      case 'product':
        state.product = decode(raw);
        break;
      case 'dataset':
        state.dataset = decode(raw);
        break;
      case 'column':
        state.column = decode(raw);
        break;
      case 'series':
        state.series = [];
        for (const pair of raw.split(';')) {
          if (pair === '') continue;
          const colon = pair.indexOf(':');
          if (colon <= 0) {
            problems.push(`series: "${decode(pair)}" is not column:value`);
            continue;
          }
          const col = decode(pair.slice(0, colon));
          if (state.series.some(([c]) => c === col)) {
            problems.push(`series: ${col} is given twice; the first is kept`);
            continue;
          }
          state.series.push([col, decode(pair.slice(colon + 1))]);
        }
        break;
      case 'as_of':
        state.asOf = [];
        for (const item of raw.split(',')) {
          const v = decode(item).trim();
          if (v === '' || state.asOf.includes(v)) continue;
          if (!isAsOf(v)) {
            problems.push(`as_of: "${v}" is neither current, YYYY-MM-DD nor an RFC 3339 instant`);
            continue;
          }
          if (state.asOf.length === MAX_AS_OF) {
            problems.push(`as_of: at most ${MAX_AS_OF} instants; "${v}" and any after it are left out`);
            break;
          }
          state.asOf.push(v);
        }
        break;
      case 'date_from':
      case 'date_to': {
        const v = decode(raw);
        if (v !== '' && !isDate(v)) problems.push(`${name}: "${v}" is not a YYYY-MM-DD date`);
        else if (name === 'date_from') state.dateFrom = v;
        else state.dateTo = v;
        break;
      }
      default:
        problems.push(`unknown parameter ${name}`);
    }
  }
  if (state.dateFrom !== '' && state.dateTo !== '' && state.dateFrom > state.dateTo) {
    problems.push(`date_from ${state.dateFrom} is after date_to ${state.dateTo}`);
  }
  return { state, problems };
}

/** encodeURIComponent: the separators of this query (`;` `:` `,`) come out encoded. */
const enc = encodeURIComponent;
/** As enc, but `:` stays bare where it separates nothing (an instant, a series value). */
const encColon = (/** @type {string} */ s) => enc(s).replace(/%3A/gi, ':');

/**
 * The query string (without `?`) of a state, in the contract's parameter order, empty
 * parameters left out, separators written bare: parseState(writeState(s)) gives s back.
 * @param {ExploreState} state
 */
export function writeState(state) {
  /** @type {string[]} */
  const parts = [];
  if (state.product !== '') parts.push(`product=${enc(state.product)}`);
  if (state.dataset !== '') parts.push(`dataset=${enc(state.dataset)}`);
  if (state.series.length > 0) parts.push(`series=${state.series.map(([c, v]) => `${enc(c)}:${encColon(v)}`).join(';')}`);
  if (state.column !== '') parts.push(`column=${enc(state.column)}`);
  if (state.asOf.length > 0) parts.push(`as_of=${state.asOf.map(encColon).join(',')}`);
  if (state.dateFrom !== '') parts.push(`date_from=${enc(state.dateFrom)}`);
  if (state.dateTo !== '') parts.push(`date_to=${enc(state.dateTo)}`);
  return parts.join('&');
}
