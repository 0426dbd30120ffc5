import { fnv1a } from '../query/hash.js';

/**
 * A weak ETag (contract 9) naming the generation and the normalised request: the canonical
 * query (parameters in a fixed form), format, columns, encoding and cursor. Weak because
 * the per-request metadata (retrieved_at, record_id) differs between two answers with the
 * same rows. The generation is in clear so an operator can read which data a client holds.
 */
export function etagOf(dataset: string, generation: number, normalised: string): string {
  const text = `${dataset}\u0001${normalised}`;
  const a = fnv1a(text).toString(36);
  const b = fnv1a(text, 0x9e3779b9).toString(36);
  return `W/"g${generation}-${a}${b}"`;
}

/** If-None-Match matches (weak comparison, RFC 9110 13.1.2): `*`, or any listed tag equal up to the W/ prefix. */
export function ifNoneMatchHits(header: string, etag: string): boolean {
  if (header === '') return false;
  if (header.trim() === '*') return true;
  const opaque = etag.startsWith('W/') ? etag.slice(2) : etag;
  for (const raw of header.split(',')) {
    const t = raw.trim();
    if ((t.startsWith('W/') ? t.slice(2) : t) === opaque) return true;
  }
  return false;
}
