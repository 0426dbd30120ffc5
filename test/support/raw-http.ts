import { connect } from 'node:net';

/**
 * One HTTP/1.1 exchange over a fresh TCP connection, with the request written byte for
 * byte as given: `fetch` and `node:http` normalise or refuse exactly the targets and
 * header values a fuzz test wants to send (raw bytes, bad percent-encoding, repeated
 * headers), and a hang must show as a timeout, not as a test that never ends.
 */
export interface RawRequest {
  readonly method: string;
  /** the request target, as sent: path and query, already encoded (or not) */
  readonly target: string;
  /** in order, repeats allowed; values are written as latin1 bytes */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body?: Uint8Array;
  /** send the body with Transfer-Encoding: chunked (else Content-Length when there is one) */
  readonly chunked?: boolean;
}

export interface RawReply {
  readonly status: number;
  /** lower-cased names; a repeated header keeps every value */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body: Buffer;
  /** milliseconds from connect to the last byte */
  readonly ms: number;
}

/**
 * The exchange did not end with a whole answer: `timeout` (a hang), `closed` (no or part of
 * an answer) or `malformed` (not HTTP, or a body of unknown length).
 */
export class RawHttpError extends Error {
  constructor(
    readonly kind: 'timeout' | 'closed' | 'malformed',
    message: string,
  ) {
    super(message);
  }
}

/** The request's bytes: head in latin1 (so a test can send any byte), then the body. */
export function encodeRequest(r: RawRequest): Buffer {
  let head = `${r.method} ${r.target} HTTP/1.1\r\nhost: 127.0.0.1\r\n`;
  for (const [name, value] of r.headers) head += `${name}: ${value}\r\n`;
  const body = r.body;
  if (body !== undefined && r.chunked === true) head += 'transfer-encoding: chunked\r\n';
  else if (body !== undefined) head += `content-length: ${body.byteLength}\r\n`;
  head += '\r\n';
  const parts = [Buffer.from(head, 'latin1')];
  if (body !== undefined && r.chunked === true) {
    // Two chunks (when there is more than a byte) and the last, empty one.
    const cut = body.byteLength >> 1;
    for (const piece of [body.subarray(0, cut), body.subarray(cut)]) {
      if (piece.byteLength > 0) parts.push(Buffer.from(`${piece.byteLength.toString(16)}\r\n`, 'latin1'), Buffer.from(piece), Buffer.from('\r\n'));
    }
    parts.push(Buffer.from('0\r\n\r\n'));
  } else if (body !== undefined) parts.push(Buffer.from(body));
  return Buffer.concat(parts);
}

/**
 * Sends `r` to 127.0.0.1:`port` and reads one answer: its head, then Content-Length bytes,
 * a chunked body, or none (HEAD, 1xx, 204, 304). Rejects with RawHttpError when no whole
 * answer came within `timeoutMs` or the server closed first.
 */
export function rawRequest(port: number, r: RawRequest, timeoutMs: number): Promise<RawReply> {
  const started = performance.now();
  const bytes = encodeRequest(r);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const finish = (outcome: RawReply | RawHttpError): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (outcome instanceof RawHttpError) reject(outcome);
      else resolve(outcome);
    };
    const timer = setTimeout(() => finish(new RawHttpError('timeout', `no whole answer within ${timeoutMs} ms (${received} bytes received)`)), timeoutMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      received += chunk.byteLength;
      try {
        const reply = parseReply(Buffer.concat(chunks), r.method === 'HEAD', started);
        if (reply !== null) finish(reply);
      } catch (e) {
        finish(new RawHttpError('malformed', (e as Error).message));
      }
    });
    socket.on('error', (e) => finish(new RawHttpError('closed', `connection failed: ${e.message} (${received} bytes received)`)));
    socket.on('close', () => finish(new RawHttpError('closed', `closed after ${received} bytes without a whole answer`)));
  });
}

/** A whole answer in `buf`, or null while more bytes are needed. */
function parseReply(buf: Buffer, head: boolean, started: number): RawReply | null {
  const end = buf.indexOf('\r\n\r\n');
  if (end < 0) return null;
  const lines = buf.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? NaN);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP status line: ${JSON.stringify(lines[0])}`);
  const headers = new Map<string, string[]>();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  const rest = buf.subarray(end + 4);
  const done = (body: Buffer): RawReply => ({ status, headers, body, ms: performance.now() - started });
  if (head || status < 200 || status === 204 || status === 304) return done(Buffer.alloc(0));
  const length = headers.get('content-length')?.[0];
  if (length !== undefined) return rest.byteLength >= Number(length) ? done(rest.subarray(0, Number(length))) : null;
  if (headers.get('transfer-encoding')?.[0]?.toLowerCase() === 'chunked') {
    const body = dechunk(rest);
    return body === null ? null : done(body);
  }
  // Neither: the body runs to the close, which this reader does not wait for.
  throw new Error(`an answer with neither content-length nor chunked encoding (status ${status})`);
}

function dechunk(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', at);
    if (eol < 0) return null;
    const size = parseInt(buf.subarray(at, eol).toString('latin1'), 16);
    if (buf.byteLength < eol + 2 + size + 2) return null;
    if (size === 0) return Buffer.concat(parts);
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}
