import { ApiError, invalidParam } from '../errors.js';
import type { Encoding } from './encoded-body.js';

export type Format = 'json' | 'csv' | 'arrow';

export const CONTENT_TYPES: Readonly<Record<Format, string>> = {
  json: 'application/json',
  csv: 'text/csv; charset=utf-8',
  arrow: 'application/vnd.apache.arrow.stream',
};

const MEDIA: ReadonlyArray<readonly [Format, string, string]> = [
  ['json', 'application', 'json'],
  ['csv', 'text', 'csv'],
  ['arrow', 'application', 'vnd.apache.arrow.stream'],
];

interface Range {
  readonly type: string;
  readonly subtype: string;
  readonly q: number;
  /** position in the header: among equal q and equal specificity, the client's order wins */
  readonly order: number;
}

/** `q=0.5` -> 0.5; absent -> 1; malformed -> 1 would be lenient, RFC 9110 12.4.2 grammar says 0..1 with up to 3 decimals: anything else reads as 0 (not acceptable). */
function qOf(params: string[]): number {
  for (const p of params) {
    const [k, v] = p.split('=').map((s) => s.trim());
    if (k?.toLowerCase() !== 'q') continue;
    return v !== undefined && /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(v) ? Number(v) : 0;
  }
  return 1;
}

function parseAccept(header: string): Range[] {
  const out: Range[] = [];
  header.split(',').forEach((part, order) => {
    const [range, ...params] = part.split(';');
    const [type, subtype] = (range ?? '').trim().toLowerCase().split('/');
    if (!type || !subtype) return;
    out.push({ type, subtype, q: qOf(params), order });
  });
  return out;
}

/** The q a range list gives one media type: the most specific matching range decides (RFC 9110 12.5.1). */
function qFor(ranges: readonly Range[], type: string, subtype: string): { q: number; order: number } | null {
  let best: Range | null = null;
  let bestRank = -1;
  for (const r of ranges) {
    const rank = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' && r.subtype === '*' ? 0 : -1;
    if (rank > bestRank) {
      best = r;
      bestRank = rank;
    }
  }
  return best === null ? null : { q: best.q, order: best.order };
}

/**
 * The answer's format (contract 9): `format=` wins; else the Accept header with q-values
 * (the highest q; ties go to the type the client listed first, then json, csv, arrow); no
 * Accept (or an empty one) is json. An Accept that admits none of the three is 406.
 */
export function negotiateFormat(formatParam: string | undefined, accept: string): Format {
  if (formatParam !== undefined) {
    if (formatParam === 'json' || formatParam === 'csv' || formatParam === 'arrow') return formatParam;
    throw invalidParam('format', 'format must be json, csv or arrow');
  }
  if (accept.trim() === '') return 'json';
  const ranges = parseAccept(accept);
  let best: { format: Format; q: number; order: number } | null = null;
  for (const [format, type, subtype] of MEDIA) {
    const m = qFor(ranges, type, subtype);
    if (m === null || m.q <= 0) continue;
    if (best === null || m.q > best.q || (m.q === best.q && m.order < best.order)) best = { format, q: m.q, order: m.order };
  }
  if (best === null) {
    throw new ApiError(
      'not_acceptable',
      `none of the answer's media types is acceptable: ${MEDIA.map(([, t, s]) => `${t}/${s}`).join(', ')} (or use format=json|csv|arrow)`,
    );
  }
  return best.format;
}

/**
 * The content coding (contract 9): br or gzip by the client's q-values (ties: br, the smaller),
 * `*` covers both, q=0 excludes; otherwise identity. Identity is always acceptable to us:
 * RFC 9110 12.5.3 lets a server send identity when nothing else fits, and a data answer
 * that cannot be sent at all would help no one.
 */
export function negotiateEncoding(acceptEncoding: string): Encoding | null {
  if (acceptEncoding === '') return null;
  let star = -1;
  const q: Record<string, number> = {};
  for (const part of acceptEncoding.split(',')) {
    const [name, ...params] = part.split(';');
    const coding = (name ?? '').trim().toLowerCase();
    if (coding === '') continue;
    const value = qOf(params);
    if (coding === '*') star = value;
    else q[coding] = value;
  }
  const of = (c: string): number => q[c] ?? (star >= 0 ? star : 0);
  const br = of('br');
  const gzip = Math.max(of('gzip'), q['x-gzip'] ?? 0);
  if (br <= 0 && gzip <= 0) return null;
  return br >= gzip ? 'br' : 'gzip';
}
