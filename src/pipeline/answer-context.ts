import { RequestKey, type KeyParts } from '../cache/request-key.js';
import type { FreshAnswer } from '../cache/response-cache.js';
import type { Encoding } from '../format/encoded-body.js';
import type { FormatWriter } from '../format/format-writer.js';
import type { Format } from '../format/negotiate.js';
import type { PageMeta, RequestStamp } from '../format/resolved-page.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import type { Generation } from '../generations/generation.js';
import type { HeaderBlock } from '../http/header-block.js';
import type { RecordId } from '../http/record-id.js';
import type { HttpRequest } from '../http/types.js';
import type { CanonicalForm } from '../query/canonical-text.js';
import type { Mutable } from '../mutable.js';
import type { DataAnswer } from './data-answer.js';
import type { DataEndpointKind, PinnedRequest } from './data-page.js';

/** the body of a 304 and the prefix of formats without one (never written to) */
export const EMPTY = new Uint8Array(0);

/**
 * One data request on its way through the stages (parse -> pin -> resolve -> write ->
 * headers), each filling its part: one object per serving thread, refilled by every
 * request, so everything in it is borrowed (ownership.ts): valid until the request's
 * synchronous part returns. It is the request's key parts (the request key is filled from
 * it), and the fresh answer the response cache keeps (its meta and shape).
 */
export class AnswerContext implements KeyParts, FreshAnswer {
  // parse
  slot: DatasetSlot = null!;
  req: HttpRequest = null!;
  recordId: RecordId = '';
  kind: DataEndpointKind = 'rows';
  format: Format = 'json';
  writer: FormatWriter = null!;
  /** the content coding asked for (the write stage sends a small body plain whatever this says) */
  encoding: Encoding | null = null;
  /** `columns` as given, or undefined when absent */
  columnsAsked: string | undefined = undefined;

  // pin
  request: PinnedRequest = null!;
  gen: Generation = null!;
  /** stored columns asked for by `columns` (indexes), or null for all */
  projection: readonly number[] | null = null;
  /** `as_of` and `generation` both fixed (contract 12) */
  immutable = false;

  // the request key's parts (KeyParts, with `format` and `encoding` above): the normalised request
  dataset = '';
  generation = 0;
  canonical: CanonicalForm = '';
  columns = '*';
  cursor: string | null = null;
  /** the normalised request, hashed once (ETag, response cache) */
  readonly key = new RequestKey();

  // write
  /** when and as which record the request is answered */
  readonly stamp: Mutable<RequestStamp> = { retrievedAtUs: 0, recordId: '' };
  /** the resolved page's envelope figures (the resolver's scratch) */
  meta: PageMeta = null!;
  /** the writer's shape of the page (its layout, kept with a cached middle) */
  shape: unknown = null;

  /** the answer given at once (refilled per request, like its header block and body) */
  private readonly now: Mutable<DataAnswer> = { status: 200, headerBlock: { first: '', rest: EMPTY }, contentType: '', body: EMPTY, rows: 0, format: 'json' };

  /** The answer given at once, in the writer's content type and format: the thread's object. */
  answered(status: 200 | 304, headerBlock: HeaderBlock, body: Uint8Array, rows: number): DataAnswer {
    const now = this.now;
    now.status = status;
    now.headerBlock = headerBlock;
    now.contentType = this.writer.contentType;
    now.body = body;
    now.rows = rows;
    now.format = this.format;
    return now;
  }
}
