import type { Field } from 'apache-arrow';
import { ByteWriter } from '../../render/byte-writer.js';
import { writeEnvelopeHead, writeEnvelopeMetadata } from '../../render/envelope.js';
import { SERIES_KEY_METADATA } from '../../snapshot/arrow-writer.js';
import { arrowFields, writeArrowBatch, writeArrowSchema } from './ipc-stream.js';
import type { FormatWriter } from '../format-writer.js';
import { LayoutCache } from '../layout-cache.js';
import { CONTENT_TYPES } from '../negotiate.js';
import type { PageView } from '../page-view.js';
import { dataAgeHours, type PageMeta, type RequestStamp, type ResolvedPage } from '../resolved-page.js';

/** What an Arrow prefix (the schema message) needs of a page: the fields and the series key, no column data. */
export interface ArrowShape {
  readonly fields: readonly Field[];
  readonly seriesKey: readonly string[];
}

/**
 * Arrow answers (contract 9): an IPC stream whose schema metadata carries
 * `pitcache.series_key` and `pitcache.envelope`, the JSON envelope without `data`.
 *
 * The envelope holds this request's record id and retrieved_at, and the schema message
 * comes first in the stream, so the schema is the per-request prefix; the record batch and
 * the end-of-stream marker are the cacheable middle (they depend on rows and columns only;
 * the schema message is a multiple of 8 bytes, so the batch's alignment holds after any
 * request's schema). A cache hit writes a fresh schema from the kept fields and meta in
 * front of the kept batch: the bodies differ only inside the schema message.
 */
export class ArrowFormatWriter implements FormatWriter<ArrowShape> {
  readonly format = 'arrow';
  readonly contentType = CONTENT_TYPES.arrow;
  readonly prefixed = true;
  /** the fields per (table, output layout), made once: a layout's Arrow types never change */
  private readonly fields = new LayoutCache<readonly Field[]>(arrowFields);

  shapeOf(view: PageView): ArrowShape {
    return { fields: this.fields.of(view.columns), seriesKey: view.seriesKey };
  }

  writePrefix(out: ByteWriter, meta: PageMeta, shape: ArrowShape, stamp: RequestStamp): void {
    const metadata = new Map([
      [SERIES_KEY_METADATA, JSON.stringify(shape.seriesKey)],
      ['pitcache.envelope', envelopeJson(meta, stamp)],
    ]);
    writeArrowSchema(out, shape.fields, metadata);
  }

  writeMiddle(out: ByteWriter, page: ResolvedPage): void {
    writeArrowBatch(out, page.view);
  }

  writeSuffix(): void {}
}

/** The JSON envelope of an answer without `data` (the same fields and bytes as a JSON answer's). */
function envelopeJson(meta: PageMeta, stamp: RequestStamp): string {
  const w = new ByteWriter(1024);
  writeEnvelopeHead(w, { productId: meta.productId, count: meta.count, hasMore: meta.nextCursor !== null, nextCursor: meta.nextCursor }, (x) => x.null());
  writeEnvelopeMetadata(w, {
    retrievedAtUs: stamp.retrievedAtUs,
    totalCount: meta.totalCount,
    recordId: stamp.recordId,
    dataLatestDate: meta.dataLatestDate,
    dataAgeHours: dataAgeHours(meta, stamp.retrievedAtUs),
    extensions: meta.extensions,
  });
  return Buffer.from(w.view()).toString('utf8').replace(',"data":null', '');
}
