import { invalidParam } from '../errors.js';

/**
 * The parameters that choose HOW rows are written, not WHICH rows (contract 9): `format` and
 * `columns`. They are taken out of the raw query before the query is parsed, so they are
 * not part of the canonical query or a cursor's fingerprint: a cursor chain may switch
 * format or columns between pages.
 */
export interface Presentation {
  /** the raw query without `format` and `columns`, as the query parser expects it */
  readonly rest: string;
  readonly format: string | undefined;
  readonly columns: string | undefined;
}

const NONE: Presentation = { rest: '', format: undefined, columns: undefined };
/** The answer for a query naming neither parameter, refilled per call (see splitPresentation). */
const plain: { rest: string; readonly format: undefined; readonly columns: undefined } = { rest: '', format: undefined, columns: undefined };

export function splitPresentation(rawQuery: string): Presentation {
  if (rawQuery === '') return NONE;
  // Most queries name neither: keep the raw string (no split, no join), in this thread's
  // one answer of that kind (read at once by the caller, never kept).
  if (!namesKey(rawQuery, 'format') && !namesKey(rawQuery, 'columns')) {
    plain.rest = rawQuery;
    return plain;
  }
  let format: string | undefined;
  let columns: string | undefined;
  const kept: string[] = [];
  for (const part of rawQuery.split('&')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    if (key !== 'format' && key !== 'columns') {
      kept.push(part);
      continue;
    }
    const value = decode(eq < 0 ? '' : part.slice(eq + 1), key);
    if (key === 'format') {
      if (format !== undefined) throw invalidParam(key, `${key} is given more than once`);
      format = value;
    } else {
      if (columns !== undefined) throw invalidParam(key, `${key} is given more than once`);
      columns = value;
    }
  }
  return { rest: kept.join('&'), format, columns };
}

/**
 * Whether a parameter of the raw query is named exactly `key` (followed by '=', '&' or the
 * end). A scan, not a regex: RegExp#test left about 56 bytes per request (docs/decisions.md#allocation).
 */
function namesKey(raw: string, key: string): boolean {
  const n = key.length;
  for (let at = raw.indexOf(key); at >= 0; at = raw.indexOf(key, at + 1)) {
    if (at > 0 && raw.charCodeAt(at - 1) !== 0x26) continue;
    const next = at + n;
    if (next === raw.length || raw.charCodeAt(next) === 0x3d || raw.charCodeAt(next) === 0x26) return true;
  }
  return false;
}

function decode(text: string, param: string): string {
  if (!text.includes('%') && !text.includes('+')) return text;
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    throw invalidParam(param, `malformed percent-encoding in ${param}`);
  }
}
