import { randomUUID } from 'node:crypto';
import type { HttpRequest as UwsRequest, HttpResponse as UwsResponse, TemplatedApp } from 'uWebSockets.js';
import { loadNativeUws } from './native-uws.js';
import { recordIdText, type RecordId } from './record-id.js';
import { RestBuffers } from './rest-buffers.js';
import { BodyAborted, BodyTooLarge, type BodySource, type ClientInfo, type Handler, type HttpRequest, type HttpResponse } from './types.js';
import type { Mutable } from '../mutable.js';

export interface UwsServer {
  /** The port actually bound (the ephemeral one when asked for port 0). */
  readonly port: number;
  /**
   * Stops accepting connections; open ones stay and are answered (each answer then asks the
   * client to close: `Connection: close`). Idempotent. The first step of a graceful stop.
   */
  stopListening(): void;
  /** Resolves once no response is in flight (an async answer, a large body still draining). */
  idle(): Promise<void>;
  /** Stops listening and drops open connections, so the process can exit. Idempotent. */
  close(): void;
}

export interface ListenOptions {
  host: string;
  port: number;
  /** Told of every handler fault answered with 500, with the request id given to the client. */
  onError?: (err: unknown, requestId: string) => void;
  /** Request ids for 500s the transport answers itself; default `req_` + 32 hex digits. */
  newRequestId?: () => string;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  206: 'Partial Content',
  301: 'Moved Permanently',
  302: 'Found',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

// Status lines are built once: the hot path only indexes an array.
const STATUS_LINES: string[] = [];
for (let code = 100; code <= 599; code++) {
  STATUS_LINES[code] = `${code} ${STATUS_TEXT[code] ?? 'Status ' + code}`;
}

function statusLine(status: number): string {
  return STATUS_LINES[status] ?? '500 Internal Server Error';
}

function defaultRequestId(): string {
  return `req_${randomUUID().replaceAll('-', '')}`;
}

/** The generic 500: it names no internals, only the id under which the fault was reported. */
function internalError(requestId: string): HttpResponse {
  const body = JSON.stringify({
    error: { status: 500, code: 'internal_error', message: 'internal server error' },
    record_id: requestId,
  });
  return {
    status: 500,
    headers: [],
    contentType: 'application/json',
    requestId,
    body: Buffer.from(body, 'utf8'),
  };
}

/**
 * Bodies up to this size go out in one end(): uWS copies what the socket does not take at
 * once into its own buffer, which for small bodies is cheaper than arming onWritable.
 */
const ONE_SHOT_BYTES = 256 * 1024;

/** Per response: whether the request is gone (onAborted fired), shared by the async and the backpressure paths. */
interface Flight {
  aborted: boolean;
  /** onAborted is armed (uWS requires it before a response outlives its handler call) */
  armed: boolean;
  /** counted in InFlight (it outlived its handler call and is not finished) */
  held: boolean;
}

/**
 * Responses that outlived their handler call and are not finished yet: what a graceful stop
 * waits for. A synchronous answer is written before the handler returns, so it never counts.
 */
class InFlight {
  private n = 0;
  private waiters: Array<() => void> = [];
  /** set by stopListening: every answer from now on closes its connection */
  closing = false;
  /**
   * copies of reused bodies' unsent rest, reused across answers. Up to 64 MiB kept free:
   * 64 connections each awaiting a 10,000-row page (about 1.2 MB, a 2 MiB buffer) need
   * about that; a smaller bound dropped buffers and kept allocating them.
   */
  readonly rests = new RestBuffers(64 * 1024 * 1024);

  hold(flight: Flight): void {
    if (flight.held) return;
    flight.held = true;
    this.n++;
  }

  release(flight: Flight): void {
    if (!flight.held) return;
    flight.held = false;
    if (--this.n === 0) for (const w of this.waiters.splice(0)) w();
  }

  idle(): Promise<void> {
    return this.n === 0 ? Promise.resolve() : new Promise((resolve) => this.waiters.push(resolve));
  }
}

function arm(res: UwsResponse, flight: Flight, inFlight: InFlight): void {
  if (flight.armed) return;
  flight.armed = true;
  res.onAborted(() => {
    flight.aborted = true;
    inFlight.release(flight);
  });
}

/** A response's flight, made only when it outlives its handler call (an async answer, a body sent under backpressure). */
function newFlight(): Flight {
  return { aborted: false, armed: false, held: false };
}

/**
 * A large body goes out as fast as the client reads it: tryEnd sends what the socket takes,
 * onWritable sends the rest when it drains. One giant end() would instead copy the whole
 * unsent remainder into uWS's buffer at once (a slow reader of a 30 MB page pins 30 MB).
 * A synchronous handler's body may be a view into a buffer it reuses, so what is left after
 * the first try is copied once (the next request may overwrite the original); an async
 * handler's body is owned (types.ts) and is sent from where it is.
 */
function endWithBackpressure(res: UwsResponse, body: Uint8Array, flight: Flight, owned: boolean, inFlight: InFlight): boolean {
  const total = body.byteLength;
  const [, done] = res.tryEnd(body, total);
  if (done) return true;
  arm(res, flight, inFlight);
  inFlight.hold(flight);
  const sent = res.getWriteOffset();
  // A pooled copy goes back once the answer is finished; one of an aborted answer is left to the GC.
  const copy = owned ? null : inFlight.rests.take(body.subarray(sent));
  const rest = copy === null ? body.subarray(sent) : copy.subarray(0, total - sent);
  res.onWritable((offset) => {
    if (flight.aborted) return true;
    const [ok, finished] = res.tryEnd(rest.subarray(offset - sent), total);
    if (finished) {
      inFlight.release(flight);
      if (copy !== null) inFlight.rests.release(copy);
    }
    return ok;
  });
  return false;
}

function isThenable(v: HttpResponse | Promise<HttpResponse>): v is Promise<HttpResponse> {
  return typeof (v as { then?: unknown }).then === 'function';
}

function makeRoute(handler: Handler, opts: ListenOptions, inFlight: InFlight) {
  const newRequestId = opts.newRequestId ?? defaultRequestId;

  function report(err: unknown, id: RecordId): void {
    try {
      const requestId = recordIdText(id);
      if (opts.onError) opts.onError(err, requestId);
      else console.error(`[${requestId}] internal error`, err);
    } catch {
      // A failing reporter must not take the server down with it.
    }
  }

  function fail(err: unknown): HttpResponse {
    const response = internalError(newRequestId());
    report(err, response.requestId);
    return response;
  }

  /** Writes `r`; returns false when a large body is still being sent (backpressure), true when the response is finished. */
  function writeResponse(res: UwsResponse, r: HttpResponse, head: boolean, flight: Flight | null, owned: boolean): boolean {
    res.writeStatus(statusLine(r.status));
    for (const [name, value] of r.headers) res.writeHeader(name, value);
    // One native call for the whole block: writeHeader writes `name: value\r\n` as given (header-block.ts).
    const block = r.headerBlock;
    if (block !== undefined && block !== null) res.writeHeader(block.first, block.rest);
    res.writeHeader('content-type', r.contentType);
    res.writeHeader('x-request-id', r.requestId);
    if (head) {
      // endWithoutBody(length) in this uWS version writes the header but never finishes the
      // response (uNetworking/uWebSockets#1855), which stalls the connection; so the length
      // is written by hand and endWithoutBody() called without one.
      res.writeHeader('content-length', String(r.body.byteLength));
      res.endWithoutBody();
      return true;
    }
    if (r.body.byteLength <= ONE_SHOT_BYTES) {
      res.end(r.body, inFlight.closing);
      return true;
    }
    return endWithBackpressure(res, r.body, flight ?? newFlight(), owned, inFlight);
  }

  /** Writes `r`; if the response itself is malformed, drops the connection instead. */
  function respond(res: UwsResponse, r: HttpResponse, head: boolean, flight: Flight | null, owned: boolean): void {
    try {
      if (writeResponse(res, r, head, flight, owned) && flight !== null) inFlight.release(flight);
    } catch (err) {
      // Part of a status line or header may already be out, so no clean 500 is possible.
      report(err, r.requestId);
      if (flight !== null) inFlight.release(flight);
      res.close();
    }
  }

  // The request being handled, for `client` below: set around the handler's synchronous part only.
  let currentRes: UwsResponse | null = null;
  let currentReq: UwsRequest | null = null;
  const client: ClientInfo = {
    peer: () => (currentRes === null ? '' : Buffer.from(currentRes.getRemoteAddressAsText()).toString('latin1')),
    forwardedFor: () => (currentReq === null ? '' : currentReq.getHeader('x-forwarded-for')),
  };

  /**
   * The request handed to the handler: one per route, refilled per request (near-zero
   * allocation per request: docs/decisions.md#allocation). Valid until the handler returns or awaits, like `client`: a
   * handler that answers later copies what it needs first (ownedRequest, types.ts).
   */
  const request: Mutable<HttpRequest> = { method: '', path: '', rawQuery: '', apiKey: null, accept: '', acceptEncoding: '', ifNoneMatch: '', client };
  /** Set by the handler's read of the body, if it reads one (onData must be set before the handler returns). */
  let bodyFlight: Flight | null = null;

  return (res: UwsResponse, req: UwsRequest): void => {
    // req lives on uWS's stack: copy everything out before anything can be deferred.
    const method = req.getCaseSensitiveMethod();
    const apiKey = req.getHeader('x-api-key');
    request.method = method;
    request.path = req.getUrl();
    // getQuery() is undefined without '?'; getQuery(key) would decode the buffer in place.
    request.rawQuery = req.getQuery() ?? '';
    request.apiKey = apiKey === '' ? null : apiKey;
    request.accept = req.getHeader('accept');
    request.acceptEncoding = req.getHeader('accept-encoding');
    request.ifNoneMatch = req.getHeader('if-none-match');
    const head = method === 'HEAD';
    // Only a POST carries a body here: other requests read no more headers for it.
    if (method === 'POST') {
      const flight = newFlight();
      bodyFlight = flight;
      request.body = bodySource(res, req, flight, inFlight);
    } else {
      request.body = undefined;
    }

    let out: HttpResponse | Promise<HttpResponse>;
    currentRes = res;
    currentReq = req;
    try {
      out = handler(request);
    } catch (err) {
      out = fail(err);
    } finally {
      currentRes = null;
      currentReq = null;
    }

    if (!isThenable(out)) {
      // Synchronous: written before returning, so a reused body view is still intact.
      respond(res, out, head, null, false);
      return;
    }

    const flight = bodyFlight ?? newFlight();
    bodyFlight = null;
    arm(res, flight, inFlight);
    inFlight.hold(flight);
    out.then(
      (r) => {
        if (!flight.aborted) res.cork(() => respond(res, r, head, flight, true));
      },
      (err: unknown) => {
        const r = fail(err);
        if (!flight.aborted) res.cork(() => respond(res, r, head, flight, true));
      },
    );
  };
}

/**
 * The body of a POST as the handler may read it: onData is set only when it asks (the
 * handler runs synchronously inside the uWS callback, as uWS requires). Each chunk is
 * copied (uWS reuses its buffer): into one buffer of the announced Content-Length, or
 * into a list when there is none. Past `maxBytes` the read fails at once, so the handler
 * can answer 413 while the client is still sending; what else comes is dropped, and the
 * connection stays readable.
 */
function bodySource(res: UwsResponse, req: UwsRequest, flight: Flight, inFlight: InFlight): BodySource {
  const contentType = req.getHeader('content-type');
  const contentEncoding = req.getHeader('content-encoding');
  const contentLength = req.getHeader('content-length');
  let asked = false;
  const gone = new AbortController();
  return {
    contentType,
    contentEncoding,
    contentLength,
    gone: gone.signal,
    read(maxBytes: number): Promise<Uint8Array> {
      if (asked) return Promise.reject(new Error('internal: a body is read once'));
      asked = true;
      // uWS keeps one onAborted per response: this one stands for arm()'s too.
      flight.armed = true;
      return new Promise((resolve, reject) => {
        const announced = /^\d{1,15}$/.test(contentLength) ? Number(contentLength) : -1;
        let done = false;
        let whole: Uint8Array | null = announced >= 0 && announced <= maxBytes ? new Uint8Array(announced) : null;
        const parts: Uint8Array[] = [];
        let received = 0;
        res.onAborted(() => {
          flight.aborted = true;
          inFlight.release(flight);
          if (!done) {
            done = true;
            reject(new BodyAborted());
          }
          gone.abort();
        });
        res.onData((chunk, isLast) => {
          if (done) return;
          const n = chunk.byteLength;
          if (received + n > maxBytes) {
            done = true;
            whole = null;
            parts.length = 0;
            reject(new BodyTooLarge(maxBytes));
            return;
          }
          const bytes = new Uint8Array(chunk);
          if (whole !== null && received + n <= whole.length) whole.set(bytes, received);
          else {
            if (whole !== null) {
              parts.push(whole.subarray(0, received));
              whole = null;
            }
            parts.push(bytes.slice());
          }
          received += n;
          if (!isLast) return;
          done = true;
          if (whole !== null) resolve(received === whole.length ? whole : whole.subarray(0, received));
          else resolve(Buffer.concat(parts, received));
        });
      });
    },
  };
}

/** Serves every method and path through `handler` on host:port (port 0: an ephemeral port). */
export function listen(handler: Handler, opts: ListenOptions): Promise<UwsServer> {
  const uws = loadNativeUws();
  const app = uws.App();
  const inFlight = new InFlight();
  app.any('/*', makeRoute(handler, opts, inFlight));

  return new Promise((resolve, reject) => {
    app.listen(opts.host, opts.port, (listenSocket) => {
      if (listenSocket === false) {
        closeApp(app);
        reject(new Error(`could not listen on ${opts.host}:${opts.port} (address in use or not available)`));
        return;
      }
      const port = uws.us_socket_local_port(listenSocket);
      let listening = true;
      let closed = false;
      const stopListening = (): void => {
        if (!listening) return;
        listening = false;
        inFlight.closing = true;
        uws.us_listen_socket_close(listenSocket);
      };
      resolve({
        port,
        stopListening,
        idle: () => inFlight.idle(),
        close() {
          if (closed) return;
          closed = true;
          stopListening();
          closeApp(app);
        },
      });
    });
  });
}

/** app.close() (drops keep-alive connections) is in the binary but not in its typings. */
function closeApp(app: TemplatedApp): void {
  const closable = app as TemplatedApp & { close?: () => void };
  if (typeof closable.close === 'function') closable.close();
}
