import { formatDate } from '../time/instant.js';

/** The envelope outside `data`, as every format carries it in headers (contract 9). */
export interface EnvelopeFields {
  readonly count: number;
  readonly totalCount: number;
  readonly nextCursor: string | null;
  /** days since epoch, or null when the dataset has no resolved row under the request's as_of */
  readonly dataLatestDate: number | null;
  readonly dataAgeHours: number | null;
  readonly generation: number;
}

export type HeaderList = Array<readonly [string, string]>;

/**
 * Appends x-count, x-total-count, x-has-more, x-next-cursor (only when more), x-data-latest-date
 * and x-data-age-hours (only when known: a header has no null), x-generation, and
 * `Link: <same request with the cursor>; rel="next"`. The Link target is the request's own
 * path and query with `cursor` replaced, a relative reference (RFC 8288 3.1): it stays
 * right behind any proxy that rewrites the host.
 */
export function appendEnvelopeHeaders(out: HeaderList, e: EnvelopeFields, path: string, rawQuery: string): void {
  out.push(['x-count', String(e.count)]);
  out.push(['x-total-count', String(e.totalCount)]);
  out.push(['x-has-more', e.nextCursor === null ? 'false' : 'true']);
  if (e.nextCursor !== null) out.push(['x-next-cursor', e.nextCursor]);
  if (e.dataLatestDate !== null) out.push(['x-data-latest-date', formatDate(e.dataLatestDate)]);
  if (e.dataAgeHours !== null && Number.isFinite(e.dataAgeHours)) out.push(['x-data-age-hours', String(e.dataAgeHours)]);
  out.push(['x-generation', String(e.generation)]);
  if (e.nextCursor !== null) out.push(['link', `<${nextUrl(path, rawQuery, e.nextCursor)}>; rel="next"`]);
}

/** The same request with `cursor` set to the token (any previous cursor dropped). Tokens are base64url: no escaping needed. */
export function nextUrl(path: string, rawQuery: string, cursor: string): string {
  const kept = rawQuery.split('&').filter((p) => p !== '' && p !== 'cursor' && !p.startsWith('cursor='));
  kept.push(`cursor=${cursor}`);
  return `${path}?${kept.join('&')}`;
}
