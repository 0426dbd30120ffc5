import type { HeaderWriter } from './header-writer.js';

/**
 * What a weak ETag names: the generation, in clear, and the two 32-bit hashes of the
 * normalised request (cache/request-key.ts: FNV-1a of `${dataset}\u0001${normalised text}`
 * from two seeds; two make collisions between live answers negligible).
 */
export interface EtagSource {
  readonly generation: number;
  readonly hashA: number;
  readonly hashB: number;
}

/**
 * A weak ETag (contract 9) naming the generation and the normalised request: the canonical
 * query (parameters in a fixed form), format, columns, encoding and cursor. Weak because
 * the per-request metadata (retrieved_at, record_id) differs between two answers with the
 * same rows. The generation is in clear so an operator can read which data a client holds.
 */
export function etagOf(e: EtagSource): string {
  return `W/"g${e.generation}-${e.hashA.toString(36)}${e.hashB.toString(36)}"`;
}

/** An `etag` header whose value is exactly etagOf(e), written as digits (no string made). */
export function writeEtag(h: HeaderWriter, e: EtagSource): void {
  h.start('etag').ascii('W/"g').int(e.generation).ascii('-');
  h.base36(e.hashA).base36(e.hashB).ascii('"');
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
