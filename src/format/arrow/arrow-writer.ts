import type { ByteWriter } from '../../render/byte-writer.js';
import { writeEnvelopeHead, writeEnvelopeMetadata } from '../../render/envelope.js';
import { SERIES_KEY_METADATA } from '../../snapshot/arrow-writer.js';
import type { FormatWriter } from '../format-writer.js';
import { LayoutCache } from '../layout-cache.js';
import { CONTENT_TYPES } from '../negotiate.js';
import type { OutputColumn } from '../page-view.js';
import { dataAgeHours, type PageMeta, type RequestStamp, type ResolvedPage } from '../resolved-page.js';
import { writeArrowStream } from './ipc-stream.js';
import { ArrowLayout } from './arrow-layout.js';

export const ENVELOPE_METADATA = 'pitcache.envelope';

/**
 * Arrow answers (contract 9): an IPC stream whose schema metadata carries
 * `pitcache.series_key` and `pitcache.envelope`, the JSON envelope without `data`. The
 * envelope holds this request's record id and retrieved_at, so the head is per request:
 * never cached, and there is no tail. What each layout's answers share (the schema message
 * but its envelope, the batch header template) is made once per layout: ArrowLayout.
 */
export class ArrowFormatWriter implements FormatWriter {
  readonly format = 'arrow';
  readonly contentType = CONTENT_TYPES.arrow;
  readonly cacheableHead = false;
  private readonly layouts = new LayoutCache((): { key: readonly string[] | null; layout: ArrowLayout | null } => ({ key: null, layout: null }));

  writeHead(out: ByteWriter, page: ResolvedPage, stamp: RequestStamp): void {
    const { view, meta } = page;
    writeArrowStream(out, view, this.layoutOf(view.columns, view.seriesKey), (w) => writeEnvelope(w, meta, stamp));
  }

  writeTail(): void {}

  /**
   * A layout's stored columns belong to one table, whose series key is one array, so one
   * message per layout; a layout of computed columns only (shared across tables by shape)
   * is re-encoded when the key differs.
   */
  private layoutOf(columns: readonly OutputColumn[], seriesKey: readonly string[]): ArrowLayout {
    const held = this.layouts.of(columns);
    if (held.layout === null || (held.key !== seriesKey && !sameKey(held.key!, seriesKey))) {
      held.layout = new ArrowLayout(columns, [[SERIES_KEY_METADATA, JSON.stringify(seriesKey)]], ENVELOPE_METADATA);
    }
    held.key = seriesKey;
    return held.layout;
  }
}

function sameKey(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The JSON envelope of an answer without `data`: the same fields and bytes as a JSON answer's, as UTF-8. */
function writeEnvelope(w: ByteWriter, meta: PageMeta, stamp: RequestStamp): void {
  writeEnvelopeHead(w, { productId: meta.productId, count: meta.count, hasMore: meta.nextCursor !== null, nextCursor: meta.nextCursor }, null);
  writeEnvelopeMetadata(w, {
    retrievedAtUs: stamp.retrievedAtUs,
    totalCount: meta.totalCount,
    recordId: stamp.recordId,
    dataLatestDate: meta.dataLatestDate,
    dataAgeHours: dataAgeHours(meta, stamp.retrievedAtUs),
    extensions: meta.extensions,
  });
}
