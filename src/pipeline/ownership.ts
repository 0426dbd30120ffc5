import { ownedMeta, type PageMeta, type RequestStamp } from '../format/resolved-page.js';
import { ownedBlock } from '../http/header-block.js';
import { recordIdText, type RecordId } from '../http/record-id.js';
import { ownedRequest, type HttpRequest } from '../http/types.js';
import type { RequestKey } from '../cache/request-key.js';
import type { DataAnswer } from './data-answer.js';

declare const OWNED: unique symbol;

/**
 * A value that outlives the request's synchronous part. What a serving thread answers a
 * request with is borrowed by default: the transport's request object, the record id's
 * bytes, the request key, the stamp, the page's metadata, the header block and the body are
 * refilled by the next request of the thread (docs/decisions.md#allocation). Whatever an
 * answer needs after an `await` must be `Owned`, and only `ownAcrossAwait` and `ownAnswer`
 * make one, so code past an await that is handed borrowed state does not type-check.
 */
export type Owned<T> = T & { readonly [OWNED]: true };

/** What an answer finished after an await needs of its request, every part borrowed. */
export interface BorrowedRequestState {
  readonly req: HttpRequest;
  readonly recordId: RecordId;
  /** null where the await comes before the key is known (a generation fetched first) */
  readonly key: RequestKey | null;
  readonly stamp: RequestStamp | null;
  readonly meta: PageMeta | null;
}

/** The same parts, copied: the request without its client (which lives on the transport's stack), the id as a string. */
export interface OwnedRequestState {
  readonly req: Owned<HttpRequest>;
  readonly recordId: string;
  readonly key: Owned<RequestKey> | null;
  readonly stamp: Owned<RequestStamp> | null;
  readonly meta: Owned<PageMeta> | null;
}

/**
 * The one place a request's borrowed state is copied before an await (a generation fetched
 * from history, a large body compressed on the thread pool): each part as its own module
 * defines a copy of it.
 */
export function ownAcrossAwait(s: BorrowedRequestState): OwnedRequestState {
  const recordId = recordIdText(s.recordId);
  return {
    req: ownedRequest(s.req) as Owned<HttpRequest>,
    recordId,
    key: s.key === null ? null : (s.key.copy() as Owned<RequestKey>),
    stamp: s.stamp === null ? null : ({ retrievedAtUs: s.stamp.retrievedAtUs, recordId: recordIdText(s.stamp.recordId) } as Owned<RequestStamp>),
    meta: s.meta === null ? null : (ownedMeta(s.meta) as Owned<PageMeta>),
  };
}

/** An answer given at once (the thread's object, its block and body views into the thread's buffers) as one of its own. */
export function ownAnswer(a: DataAnswer): Owned<DataAnswer> {
  const owned: DataAnswer = { ...a, headerBlock: ownedBlock(a.headerBlock), body: Buffer.from(a.body) };
  return owned as Owned<DataAnswer>;
}
