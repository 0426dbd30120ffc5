/**
 * What went wrong talking to S3, in words an operator can act on: every message names the
 * operation and the s3:// address, and says why. Nothing from the request's signature or
 * credentials ever reaches a message.
 */

import { PreconditionFailedError } from './snapshot-source.js';

/** The shape of an AWS SDK v3 error, as far as we look at it. */
interface SdkErrorLike {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly code?: unknown;
  readonly $metadata?: { readonly httpStatusCode?: unknown };
}

export type S3Operation = 'GetObject' | 'HeadObject' | 'PutObject' | 'ListObjectsV2' | 'DeleteObject';

export class S3SourceError extends Error {
  /** The HTTP status the store answered, if it answered. */
  readonly httpStatus: number | undefined;
  /** The S3 error code (`NoSuchBucket`) or network error code (`ECONNREFUSED`), if any. */
  readonly code: string | undefined;

  /**
   * The SDK's error is deliberately not kept as `cause`: it holds the signed request
   * (access key id, signature), and loggers that serialize causes would print it.
   */
  constructor(
    readonly operation: S3Operation,
    /** `s3://bucket/key` (or `s3://bucket/prefix/` for a listing). */
    readonly address: string,
    readonly reason: string,
    readonly attempts: number,
    /** `missing`: the object does not exist; `failed`: anything else. */
    readonly kind: 'missing' | 'failed',
    source?: unknown,
  ) {
    const tries = attempts > 1 ? ` after ${attempts} attempts` : '';
    super(`S3 ${operation} ${address} failed${tries}: ${reason}`);
    this.name = 'S3SourceError';
    this.httpStatus = httpStatus(source);
    const code = (source as SdkErrorLike | null)?.code;
    const name = errorName(source);
    this.code = typeof code === 'string' ? code : name !== '' && name !== 'Error' ? name : undefined;
  }
}

/** A PreconditionFailedError (same `path`, relative to the source) whose message names the S3 address. */
export class S3PreconditionFailedError extends PreconditionFailedError {
  constructor(path: string, operation: S3Operation, address: string, emulated: boolean) {
    super(path);
    const how = emulated ? 'its etag no longer matches (checked before the put)' : 'the store refused the condition';
    this.message = `S3 ${operation} ${address}: changed by someone else, conditional write refused (${how})`;
  }
}

/** No bytes arrived for the stall timeout; the request was aborted. */
export class StallError extends Error {
  constructor(readonly stallMs: number) {
    super(`stalled: no bytes received for ${stallMs} ms, request aborted`);
    this.name = 'StallError';
  }
}

/** The body ended before Content-Length bytes: a dropped connection. Worth a retry. */
export class TruncatedBodyError extends Error {
  constructor(received: number, expected: number) {
    super(`body ended after ${received} of ${expected} bytes`);
    this.name = 'TruncatedBodyError';
  }
}

export function httpStatus(e: unknown): number | undefined {
  const status = (e as SdkErrorLike | null)?.$metadata?.httpStatusCode;
  return typeof status === 'number' ? status : undefined;
}

export function errorName(e: unknown): string {
  const name = (e as SdkErrorLike | null)?.name;
  return typeof name === 'string' ? name : '';
}

export function isNoSuchKey(e: unknown): boolean {
  const name = errorName(e);
  // HEAD has no body, so a missing object is a bare 404 named NotFound.
  return name === 'NoSuchKey' || name === 'NotFound' || (httpStatus(e) === 404 && name !== 'NoSuchBucket');
}

export function isPreconditionFailed(e: unknown): boolean {
  // 409 ConditionalRequestConflict: another conditional write to the key is in flight.
  return httpStatus(e) === 412 || errorName(e) === 'PreconditionFailed' || errorName(e) === 'ConditionalRequestConflict';
}

const RETRYABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'ECONNABORTED']);
const RETRYABLE_NAMES = new Set([
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
  'SlowDown',
  'Throttling',
  'ThrottlingException',
  'InternalError',
  'ServiceUnavailable',
]);

/** Worth another attempt: the store or the network may answer differently next time. */
export function isRetryable(e: unknown): boolean {
  if (e instanceof StallError || e instanceof TruncatedBodyError) return true;
  const status = httpStatus(e);
  if (status !== undefined && (status >= 500 || status === 429)) return true;
  if (RETRYABLE_NAMES.has(errorName(e))) return true;
  const code = (e as SdkErrorLike | null)?.code;
  if (typeof code === 'string' && RETRYABLE_CODES.has(code)) return true;
  // Node's http client reports a connection dropped mid-body this way.
  const message = (e as SdkErrorLike | null)?.message;
  return typeof message === 'string' && /^(aborted|socket hang up)$/.test(message);
}

/** One line on the cause: the S3 error code and status, or the network error. */
export function describeCause(e: unknown): string {
  if (e instanceof StallError || e instanceof TruncatedBodyError) return e.message;
  const status = httpStatus(e);
  const name = errorName(e);
  const code = (e as SdkErrorLike | null)?.code;
  const raw = (e as SdkErrorLike | null)?.message;
  const message = typeof raw === 'string' ? raw : String(e);
  const parts: string[] = [];
  if (name !== '' && name !== 'Error' && name !== 'Unknown' && name !== 'UnknownError') parts.push(name);
  if (typeof code === 'string' && code !== name) parts.push(code);
  if (status !== undefined) parts.push(`HTTP ${status}`);
  const head = parts.join(', ');
  const text = redact(message.split('\n')[0] ?? '');
  return head === '' ? text : text === '' || text === name ? head : `${head}: ${text}`;
}

/**
 * Belt and braces: SDK messages do not carry secrets, but a proxy's or a store's error text
 * might echo a presigned query string or an access key id back at us.
 */
export function redact(text: string): string {
  return text
    .replace(/\b(A3T[A-Z0-9]|AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{12,}\b/g, '[redacted key id]')
    .replace(/(X-Amz-(Credential|Signature|Security-Token)=)[^&\s]+/gi, '$1[redacted]')
    .replace(/(Credential=|Signature=)[^,\s]+/g, '$1[redacted]');
}
