import type { HeaderBlock } from './header-block.js';
import type { RecordId } from './record-id.js';

/**
 * The seam between the transport (uWebSockets.js) and the application. The application
 * sees plain values only, so it can be exercised without a socket and the transport can
 * be swapped without touching it.
 */

/**
 * A request as the transport hands it to the handler: the transport's own object, refilled
 * for its next request, so valid until the handler returns or first awaits. A handler that
 * answers later takes `ownedRequest` of it first.
 */
export interface HttpRequest {
  /** Upper-case, e.g. 'GET', 'HEAD', 'POST' (uWS refuses requests whose method is not upper-case). */
  readonly method: string;
  /** URL path as uWS gives it (getUrl()): not percent-decoded. */
  readonly path: string;
  /** The raw query string after '?', undecoded; '' when absent. */
  readonly rawQuery: string;
  /** The x-api-key header; null when absent or empty. */
  readonly apiKey: string | null;
  /** Accept, Accept-Encoding and If-None-Match as sent; '' when absent (content negotiation and 304s). */
  readonly accept: string;
  readonly acceptEncoding: string;
  readonly ifNoneMatch: string;
  /**
   * Where the request came from, read on demand (only the failed-authentication throttle
   * needs it, so most requests never pay for it). Valid only until the handler first
   * returns or awaits: the transport's request lives on its stack. Absent: unknown.
   */
  readonly client?: ClientInfo;
  /**
   * The request body, for the one route that takes one (asof_join): its headers, and `read`,
   * which must be called before the handler first returns or awaits (the transport must
   * subscribe to the body then). Absent on a transport or method without a body.
   */
  readonly body?: BodySource;
}

/** A request body as it arrives. */
export interface BodySource {
  /** Content-Type, Content-Encoding and Content-Length as sent; '' when absent */
  readonly contentType: string;
  readonly contentEncoding: string;
  readonly contentLength: string;
  /**
   * Collects the body, each chunk copied as it arrives (a transport may reuse its buffer):
   * resolves with its bytes once complete, or rejects with BodyTooLarge as soon as more
   * than `maxBytes` have come (the rest is read and dropped, so the answer can still be
   * read by the client), or BodyAborted when the client went away.
   */
  read(maxBytes: number): Promise<Uint8Array>;
  /**
   * Aborts when the client goes away, at any time after `read` was called (while the body
   * comes or while the answer is computed): work for it can stop. Absent on a transport
   * that cannot tell.
   */
  readonly gone?: AbortSignal;
}

export class BodyTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
  }
}

export class BodyAborted extends Error {
  constructor() {
    super('the client went away before the body was complete');
  }
}

/** A copy of the request that outlives the handler's synchronous part (without `client`, which does not). */
export function ownedRequest(req: HttpRequest): HttpRequest {
  return {
    method: req.method,
    path: req.path,
    rawQuery: req.rawQuery,
    apiKey: req.apiKey,
    accept: req.accept,
    acceptEncoding: req.acceptEncoding,
    ifNoneMatch: req.ifNoneMatch,
  };
}

export interface ClientInfo {
  /** the socket's peer address as text, e.g. `127.0.0.1` */
  peer(): string;
  /** the X-Forwarded-For header as sent; '' when absent */
  forwardedFor(): string;
}

export interface HttpResponse {
  status: number;
  /** Headers besides content-type and x-request-id, which are written from the fields below. */
  headers: ReadonlyArray<readonly [string, string]>;
  /**
   * Further headers as bytes (header-block.ts), written after `headers`; null or absent when
   * none. Like the body, it may be a view the handler reuses (synchronous answers only).
   */
  headerBlock?: HeaderBlock | null;
  /** e.g. 'application/json' */
  contentType: string;
  /** Written as x-request-id: the handler's bytes, valid until it is called again, only in a synchronous answer (record-id.ts). */
  requestId: RecordId;
  /**
   * Body bytes. May be a view into a buffer the handler reuses: it is only valid until the
   * handler is called again, so the transport writes it before returning to the event loop
   * (uWS copies on end). A body from an async handler must be owned, not a reused view.
   */
  body: Uint8Array;
}

/**
 * A synchronous answer may be the handler's own object, refilled by its next call (like the
 * body it carries): the transport writes it before calling the handler again. An answer
 * that comes later (a promise) is owned.
 */
export type Handler = (req: HttpRequest) => HttpResponse | Promise<HttpResponse>;
