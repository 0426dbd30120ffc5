import { ByteWriter } from '../../render/byte-writer.js';
import { writeEnvelopeHead, writeEnvelopeMetadata } from '../../render/envelope.js';
import { SERIES_KEY_METADATA } from '../../snapshot/arrow-writer.js';
import { writeArrowStream } from './ipc-stream.js';
import type { FormatWriter } from '../format-writer.js';
import { CONTENT_TYPES } from '../negotiate.js';
import { dataAgeHours, type PageMeta, type RequestStamp, type ResolvedPage } from '../resolved-page.js';

/**
 * Arrow answers (contract 9): an IPC stream whose schema metadata carries
 * `pitcache.series_key` and `pitcache.envelope`, the JSON envelope without `data`. The
 * envelope holds this request's record id and retrieved_at, so the head is per request:
 * never cached, and there is no tail.
 */
export class ArrowFormatWriter implements FormatWriter {
  readonly format = 'arrow';
  readonly contentType = CONTENT_TYPES.arrow;
  readonly cacheableHead = false;

  writeHead(out: ByteWriter, page: ResolvedPage, stamp: RequestStamp): void {
    const { view, meta } = page;
    const metadata = new Map([
      [SERIES_KEY_METADATA, JSON.stringify(view.seriesKey)],
      ['pitcache.envelope', envelopeJson(meta, stamp)],
    ]);
    writeArrowStream(out, view, metadata);
  }

  writeTail(): void {}
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
