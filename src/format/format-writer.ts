import type { ByteWriter } from '../render/byte-writer.js';
import type { Format } from './negotiate.js';
import type { PageMeta, RequestStamp, ResolvedPage } from './resolved-page.js';

/**
 * One output format (contract 9) behind one interface: the data endpoints resolve a page
 * once, choose a writer per request (negotiate.ts), and let it write. A body is written in
 * two parts so the response cache can keep the first:
 *
 * - `writeHead`: for JSON the body up to `metadata`, for CSV and Arrow the whole body.
 *   When `cacheableHead` is true it depends only on (generation, normalised request) and
 *   the response cache keeps it (encoded, if the answer is) with the page's meta; `stamp`
 *   is then unused. Arrow's schema metadata carries the whole envelope, record id
 *   included, so its head is per request and never cached.
 * - `writeTail`: the per-request rest (JSON's `metadata` object with retrieved_at,
 *   record_id, data_age_hours); formats that carry the envelope in headers write nothing.
 *
 * Writers are per serving thread (they own their compiled row writers) and write only
 * into the ByteWriter they are given, at its end.
 */
export interface FormatWriter {
  readonly format: Format;
  /** the Content-Type of its answers */
  readonly contentType: string;
  readonly cacheableHead: boolean;
  writeHead(out: ByteWriter, page: ResolvedPage, stamp: RequestStamp): void;
  writeTail(out: ByteWriter, meta: PageMeta, stamp: RequestStamp): void;
}
