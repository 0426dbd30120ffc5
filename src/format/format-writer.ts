import type { ByteWriter } from './bytes/byte-writer.js';
import type { Format } from './negotiate.js';
import type { PageView } from './page-view.js';
import type { PageMeta, RequestStamp, ResolvedPage } from './resolved-page.js';

/**
 * One output format (contract 9) behind one interface: the data endpoints resolve a page
 * once, choose a writer per request (negotiate.ts), and let it write. A body is written in
 * three parts so the response cache can keep the middle one:
 *
 * - `writePrefix`: per request, before the middle. Arrow's schema message, whose metadata
 *   carries the whole envelope (record id and retrieved_at included) and comes first in the
 *   stream; JSON and CSV write nothing.
 * - `writeMiddle`: the part that depends only on (generation, normalised request), which the
 *   response cache keeps (encoded, if the answer is) with the page's meta and shape: JSON's
 *   body up to `metadata`, CSV's whole body, Arrow's record batch and end-of-stream marker.
 *   It never depends on the stamp.
 * - `writeSuffix`: per request, after the middle: JSON's `metadata` object (retrieved_at,
 *   record_id, data_age_hours); CSV and Arrow write nothing. `restampSuffix` turns one
 *   written for another request into this one's, in place.
 *
 * A prefix is written from the page's meta and its `shape`: what the prefix needs of the
 * page's columns (Arrow: the schema's fields), taken once when the middle is written and
 * kept by the response cache beside it, so a hit writes the prefix without resolving. A
 * shape is small and owned: never the columns or rows themselves (a cache entry must not
 * hold a superseded generation's data). Writers without a prefix have the shape null.
 *
 * Writers are per serving thread (they own their compiled row writers) and write only
 * into the ByteWriter they are given, at its end.
 */
export interface FormatWriter<Shape = unknown> {
  readonly format: Format;
  /** the Content-Type of its answers */
  readonly contentType: string;
  /** true when writePrefix writes bytes: an encoded body must then place them before the cached middle (encoded-body.ts) */
  readonly prefixed: boolean;
  shapeOf(view: PageView): Shape;
  writePrefix(out: ByteWriter, meta: PageMeta, shape: Shape, stamp: RequestStamp): void;
  writeMiddle(out: ByteWriter, page: ResolvedPage): void;
  writeSuffix(out: ByteWriter, meta: PageMeta, stamp: RequestStamp): void;
  /**
   * Rewrites in place, in a suffix this writer wrote for `meta` at buf[at..end), what is the
   * request's own (the stamp), so a response-cache hit can send the suffix its entry's last
   * hit left behind. Only asked for a meta whose suffix has nothing else that moves
   * (ageIsFixed). False, with nothing written, when it cannot: the caller writes anew.
   */
  restampSuffix(buf: Uint8Array, at: number, end: number, meta: PageMeta, stamp: RequestStamp): boolean;
}
