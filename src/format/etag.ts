import { fnv1a } from '../query/hash.js';
import type { HeaderWriter } from './header-writer.js';

/** The second hash's seed: two 32-bit hashes make collisions between live answers negligible. */
const SEED_B = 0x9e3779b9;
const FNV_OFFSET = 0x811c9dc5;

/**
 * A weak ETag (contract 9) naming the generation and the normalised request: the canonical
 * query (parameters in a fixed form), format, columns, encoding and cursor. Weak because
 * the per-request metadata (retrieved_at, record_id) differs between two answers with the
 * same rows. The generation is in clear so an operator can read which data a client holds.
 */
export function etagOf(dataset: string, generation: number, normalised: string): string {
  return `W/"g${generation}-${etagHash(dataset, normalised, FNV_OFFSET).toString(36)}${etagHash(dataset, normalised, SEED_B).toString(36)}"`;
}

/** FNV-1a of `${dataset}\u0001${normalised}` from `seed`, without making that string. */
function etagHash(dataset: string, normalised: string, seed: number): number {
  return fnv1a(normalised, fnv1a('\u0001', fnv1a(dataset, seed)));
}

/** An `etag` header whose value is exactly etagOf(dataset, generation, normalised), written as digits (no string made). */
export function writeEtag(h: HeaderWriter, dataset: string, generation: number, normalised: string): void {
  h.start('etag').ascii('W/"g').int(generation).ascii('-');
  h.base36(etagHash(dataset, normalised, FNV_OFFSET))
    .base36(etagHash(dataset, normalised, SEED_B))
    .ascii('"');
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
