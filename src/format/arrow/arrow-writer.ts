import type { ByteWriter } from '../bytes/byte-writer.js';
import { writeEnvelopeHead, writeEnvelopeMetadata } from '../json/envelope.js';
import { SERIES_KEY_METADATA } from '../../snapshot/arrow-writer.js';
import type { FormatWriter } from '../format-writer.js';
import { LayoutCache } from '../layout-cache.js';
import { CONTENT_TYPES } from '../negotiate.js';
import type { OutputColumn, PageView } from '../page-view.js';
import { dataAgeHours, type PageMeta, type RequestStamp, type ResolvedPage } from '../resolved-page.js';
import { ArrowLayout } from './arrow-layout.js';
import { writeArrowBatch, writeArrowStream } from './ipc-stream.js';

export const ENVELOPE_METADATA = 'pitcache.envelope';

/**
 * Arrow answers (contract 9): an IPC stream whose schema metadata carries
 * `pitcache.series_key` and `pitcache.envelope`, the JSON envelope without `data`.
 *
 * The envelope holds this request's record id and retrieved_at, and the schema message
 * comes first in the stream, so the schema is the per-request prefix; the record batch and
 * the end-of-stream marker are the cacheable middle (they depend on rows and columns only;
 * the schema message is a multiple of 8 bytes, so the batch's alignment holds after any
 * request's schema). What a layout's answers share (the schema message but its envelope,
 * the batch header template) is made once per layout (ArrowLayout) and is the shape the
 * response cache keeps beside a middle (owned bytes, no column data): an answer, hit or
 * not, writes only its envelope into it. The bodies of a hit and of the first answer
 * differ only inside the schema message.
 */
export class ArrowFormatWriter implements FormatWriter<ArrowLayout> {
  readonly format = 'arrow';
  readonly contentType = CONTENT_TYPES.arrow;
  readonly prefixed = true;
  private readonly layouts = new LayoutCache((): { key: readonly string[] | null; layout: ArrowLayout | null } => ({ key: null, layout: null }));

  shapeOf(view: PageView): ArrowLayout {
    return this.layoutOf(view.columns, view.seriesKey);
  }

  writePrefix(out: ByteWriter, meta: PageMeta, layout: ArrowLayout, stamp: RequestStamp): void {
    layout.schema.write(out, (w) => writeEnvelope(w, meta, stamp));
  }

  writeMiddle(out: ByteWriter, page: ResolvedPage): void {
    const { view } = page;
    writeArrowBatch(out, view, this.layoutOf(view.columns, view.seriesKey));
  }

  writeSuffix(): void {}

  /**
   * A whole stream without an envelope (the file channel, which joins every page of an
   * answer into one view): the schema with the series key alone, the record batch, the
   * end-of-stream marker. The batch is written as an answer's middle is.
   */
  writeStream(out: ByteWriter, view: PageView): void {
    writeArrowStream(out, view, new ArrowLayout(view.columns, [[SERIES_KEY_METADATA, JSON.stringify(view.seriesKey)]], null));
  }

  /** Its suffix is empty: nothing of a request's own to rewrite. */
  restampSuffix(_buf: Uint8Array, at: number, end: number): boolean {
    return at === end;
  }

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
  writeEnvelopeHead(w, meta.productId, meta.count, meta.nextCursor, false);
  writeEnvelopeMetadata(w, meta, stamp.retrievedAtUs, stamp.recordId, dataAgeHours(meta, stamp.retrievedAtUs));
}
