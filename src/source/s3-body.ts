import { constants } from 'node:buffer';
import { TruncatedBodyError } from './s3-errors.js';

/**
 * Collects a response body. With a known length every chunk is copied once into one
 * buffer of exactly that size: a snapshot of hundreds of MB must not be concatenated
 * chunk by chunk (quadratic copying, twice the peak memory). Only a body without a length
 * falls back to a doubling buffer, started at `sizeHint`.
 */
export async function collectBody(
  body: unknown,
  length: number | undefined,
  sizeHint: number | undefined,
  onChunk: () => void,
  signal: AbortSignal,
): Promise<Uint8Array> {
  if (body === undefined || body === null) {
    if (length === undefined || length === 0) return new Uint8Array(0);
    throw new TruncatedBodyError(0, length);
  }
  if (typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function') {
    throw new Error('response body is not a readable stream');
  }
  const chunks = body as AsyncIterable<Uint8Array>;
  // The SDK stops watching the abort signal once headers are in; the body is ours to end.
  const destroy = (body as { destroy?: (e?: Error) => void }).destroy;
  const onAbort = () => destroy?.call(body, signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    return length === undefined ? await collectGrowing(chunks, sizeHint, onChunk) : await collectExact(chunks, length, onChunk);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

async function collectExact(chunks: AsyncIterable<Uint8Array>, length: number, onChunk: () => void): Promise<Uint8Array> {
  if (!Number.isSafeInteger(length) || length < 0) throw new Error(`invalid Content-Length ${length}`);
  if (length > constants.MAX_LENGTH) throw new Error(`object of ${length} bytes is larger than the largest buffer (${constants.MAX_LENGTH})`);
  const out = new Uint8Array(length);
  let at = 0;
  for await (const chunk of chunks) {
    onChunk();
    if (at + chunk.byteLength > length) throw new Error(`body is longer than its Content-Length ${length}`);
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  if (at !== length) throw new TruncatedBodyError(at, length);
  return out;
}

async function collectGrowing(chunks: AsyncIterable<Uint8Array>, sizeHint: number | undefined, onChunk: () => void): Promise<Uint8Array> {
  let out = new Uint8Array(Math.max(1, sizeHint ?? 64 * 1024));
  let at = 0;
  for await (const chunk of chunks) {
    onChunk();
    if (at + chunk.byteLength > out.byteLength) {
      const grown = new Uint8Array(Math.max(out.byteLength * 2, at + chunk.byteLength));
      grown.set(out.subarray(0, at));
      out = grown;
    }
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  // An exact-size result: callers may keep the bytes (and their .buffer) for long.
  return at === out.byteLength ? out : out.slice(0, at);
}

/**
 * Hands each chunk of a response body to `onChunk` as it arrives (a streamed read copies it
 * into place and hashes it there). Ends the body when `signal` aborts, as collectBody does.
 */
export async function streamBody(body: unknown, signal: AbortSignal, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  if (body === undefined || body === null) return;
  if (typeof (body as AsyncIterable<unknown>)[Symbol.asyncIterator] !== 'function') throw new Error('response body is not a readable stream');
  const destroy = (body as { destroy?: (e?: Error) => void }).destroy;
  const onAbort = () => destroy?.call(body, signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    for await (const chunk of body as AsyncIterable<Uint8Array>) onChunk(chunk);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
