/**
 * Requests through the API handler itself, no socket: what the contract suite runs on
 * (fast, and the same createApiHandler and startServer wiring as production). It answers
 * as fetch over uWS would: the URL normalised as fetch does, fetch's default Accept and
 * Accept-Encoding, the transport's content-type, x-request-id and content-length headers,
 * no body for HEAD, and bodies decoded by their Content-Encoding as fetch decodes them.
 * A smaller set of tests (http-uws, the smoke per endpoint) runs over the real socket.
 */
import zlib from 'node:zlib';
import { headerBlockPairs } from '../../src/http/header-block.js';
import { recordIdText } from '../../src/http/record-id.js';
import type { Handler, HttpRequest, HttpResponse } from '../../src/http/types.js';
import type { Transport } from '../../src/threads/start.js';
import type { Reply } from './harness.js';

/** A transport that keeps the handler instead of listening. */
export function inProcessTransport(): { transport: Transport; handler: () => Handler } {
  let kept: Handler | null = null;
  return {
    transport: async (handler) => {
      kept = handler;
      return { port: 0, close: () => undefined };
    },
    handler: () => {
      if (kept === null) throw new Error('in-process transport: no handler yet');
      return kept;
    },
  };
}

/**
 * A GET as the transport hands it to the handler, for tests that hold the HttpResponse
 * itself (whether an answer is owned or a reused view shows there, not through a Reply).
 */
export function getRequest(path: string, rawQuery: string, apiKey: string, acceptEncoding = ''): HttpRequest {
  return {
    method: 'GET',
    path,
    rawQuery,
    apiKey,
    accept: '*/*',
    acceptEncoding,
    ifNoneMatch: '',
    client: { peer: () => '127.0.0.1', forwardedFor: () => '' },
  };
}

/** fetch upper-cases these methods and leaves any other as given. */
const NORMALISED_METHODS = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT']);

export async function inProcessRequest(handler: Handler, path: string, key: string | null, init: RequestInit = {}): Promise<Reply> {
  const url = new URL(path, 'http://in-process.invalid');
  const given = init.method ?? 'GET';
  const method = NORMALISED_METHODS.has(given.toUpperCase()) ? given.toUpperCase() : given;
  const h = new Headers(init.headers);
  if (key !== null) h.set('x-api-key', key);
  const req: HttpRequest = {
    method,
    path: url.pathname,
    rawQuery: url.search.slice(1),
    apiKey: h.get('x-api-key') || null,
    accept: h.get('accept') ?? '*/*',
    acceptEncoding: h.get('accept-encoding') ?? 'gzip, deflate',
    ifNoneMatch: h.get('if-none-match') ?? '',
    // No socket: the peer is loopback, as a fetch to 127.0.0.1 would be.
    client: { peer: () => '127.0.0.1', forwardedFor: () => h.get('x-forwarded-for') ?? '' },
  };
  let res: HttpResponse;
  let body: Buffer;
  try {
    const out = handler(req);
    // A synchronous body may be a view into a buffer the handler reuses: copy it before anything else runs.
    res = out instanceof Promise ? await out : out;
    body = Buffer.from(res.body);
  } catch {
    res = { status: 500, headers: [], contentType: 'application/json', requestId: 'req_transport', body: new Uint8Array(0) };
    body = Buffer.from(
      JSON.stringify({ error: { status: 500, code: 'internal_error', message: 'internal server error' }, record_id: recordIdText(res.requestId) }),
    );
  }
  const headers = new Headers();
  for (const [name, value] of res.headers) headers.append(name, value);
  if (res.headerBlock !== undefined && res.headerBlock !== null) for (const [name, value] of headerBlockPairs(res.headerBlock)) headers.append(name, value);
  headers.set('content-type', res.contentType);
  headers.set('x-request-id', recordIdText(res.requestId));
  headers.set('content-length', String(body.byteLength));
  const text = method === 'HEAD' || res.status === 304 ? '' : decode(body, headers.get('content-encoding')).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers, text, body: parsed };
}

function decode(body: Buffer, encoding: string | null): Buffer {
  switch (encoding) {
    case 'gzip':
      return zlib.gunzipSync(body);
    case 'br':
      return zlib.brotliDecompressSync(body);
    case 'deflate':
      return zlib.inflateSync(body);
    default:
      return body;
  }
}
