import type { ByteWriter } from '../bytes/byte-writer.js';
import { restampEnvelopeMetadata, writeEnvelopeHead, writeEnvelopeMetadata } from './envelope.js';
import type { RowCache } from '../arenas/row-cache.js';
import type { FormatWriter } from '../format-writer.js';
import { CONTENT_TYPES } from '../negotiate.js';
import type { PageView } from '../page-view.js';
import { dataAgeHours, type PageMeta, type RequestStamp, type ResolvedPage } from '../resolved-page.js';
import { JsonLayouts } from './json-layouts.js';

/**
 * The JSON answer (spec 2.4, contract 4): the envelope with `data` as an array of row
 * objects. One per serving thread: it owns the thread's compiled row writers (JsonLayouts)
 * and uses the row cache, if any (its thread's view of the shared arena), for the stored
 * part of every row.
 */
export class JsonFormatWriter implements FormatWriter<null> {
  readonly format = 'json';
  readonly contentType = CONTENT_TYPES.json;
  readonly prefixed = false;
  private readonly layouts: JsonLayouts;

  constructor(private readonly rowCache: RowCache | null = null) {
    this.layouts = new JsonLayouts(rowCache);
  }

  shapeOf(): null {
    return null;
  }

  writePrefix(): void {}

  /** product_id, count, has_more, next_cursor, data: what (generation, request) decide. */
  writeMiddle(out: ByteWriter, page: ResolvedPage): void {
    const { meta, view } = page;
    writeEnvelopeHead(out, meta.productId, meta.count, meta.nextCursor, true);
    this.writeRows(out, view);
  }

  /** `,"metadata":{...}}`: retrieved_at, record_id and data_age_hours are this request's. */
  writeSuffix(out: ByteWriter, meta: PageMeta, stamp: RequestStamp): void {
    writeEnvelopeMetadata(out, meta, stamp.retrievedAtUs, stamp.recordId, dataAgeHours(meta, stamp.retrievedAtUs));
  }

  /** retrieved_at and record_id rewritten in place (restampEnvelopeMetadata). */
  restampSuffix(buf: Uint8Array, at: number, end: number, meta: PageMeta, stamp: RequestStamp): boolean {
    return restampEnvelopeMetadata(buf, at, end, meta, stamp);
  }

  /** The `data` array alone, `[{...},...]` (the file channel joins pages of it). */
  writeRows(out: ByteWriter, view: PageView): void {
    this.layouts.of(view.columns).writeRows(out, view, this.rowCache);
  }
}
