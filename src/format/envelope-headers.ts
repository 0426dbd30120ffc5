import type { HeaderWriter } from './header-writer.js';

/** The envelope outside `data`, as every format carries it in headers (contract 9). */
export interface EnvelopeFields {
  readonly count: number;
  readonly totalCount: number;
  readonly nextCursor: string | null;
  /** days since epoch, or null when the dataset has no resolved row under the request's as_of */
  readonly dataLatestDate: number | null;
  readonly generation: number;
  /** contract 16: x-floor-applied */
  readonly floorApplied: boolean;
}

/**
 * Writes x-count, x-total-count, x-has-more, x-next-cursor (only when more),
 * x-data-latest-date and x-data-age-hours (only when known: a header has no null),
 * x-generation, x-floor-applied (contract 16), and `Link: <same request with the cursor>; rel="next"`. The Link target is
 * the request's own path and query with `cursor` replaced, a relative reference (RFC 8288
 * 3.1): it stays right behind any proxy that rewrites the host. Nothing here makes a
 * string: numbers and dates go in as digits (HeaderWriter).
 */
export function writeEnvelopeHeaders(h: HeaderWriter, e: EnvelopeFields, dataAgeHours: number | null, path: string, rawQuery: string): void {
  h.start('x-count').int(e.count);
  h.start('x-total-count').int(e.totalCount);
  h.start('x-has-more').ascii(e.nextCursor === null ? 'false' : 'true');
  if (e.nextCursor !== null) h.start('x-next-cursor').ascii(e.nextCursor);
  if (e.dataLatestDate !== null) h.start('x-data-latest-date').date(e.dataLatestDate);
  if (dataAgeHours !== null && Number.isFinite(dataAgeHours)) h.start('x-data-age-hours').float(dataAgeHours);
  h.start('x-generation').int(e.generation);
  h.start('x-floor-applied').ascii(e.floorApplied ? 'true' : 'false');
  if (e.nextCursor !== null) {
    h.start('link').ascii('<');
    writeNextUrl(h, path, rawQuery, e.nextCursor);
    h.ascii('>; rel="next"');
  }
}

/**
 * The same request with `cursor` set to the token (any previous cursor dropped), the
 * other parameters as sent and in order. Tokens are base64url: no escaping needed.
 */
export function writeNextUrl(h: HeaderWriter, path: string, rawQuery: string, cursor: string): void {
  h.utf8(path).ascii('?');
  let from = 0;
  while (from < rawQuery.length) {
    let to = rawQuery.indexOf('&', from);
    if (to < 0) to = rawQuery.length;
    if (to > from && !isCursorParam(rawQuery, from, to)) h.utf8(rawQuery.slice(from, to)).ascii('&');
    from = to + 1;
  }
  h.ascii('cursor=').ascii(cursor);
}

/** `cursor` or `cursor=...` at rawQuery[from..to). */
function isCursorParam(q: string, from: number, to: number): boolean {
  return q.startsWith('cursor', from) && (to === from + 6 || q.charCodeAt(from + 6) === 0x3d);
}
