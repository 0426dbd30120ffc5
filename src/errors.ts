/**
 * Every error the API can answer, in one place. A code is stable (clients switch on it);
 * its HTTP status follows from the code, never from the call site.
 */
export const ERROR_STATUS = {
  invalid_parameter: 400,
  unknown_parameter: 400,
  invalid_cursor: 400,
  cursor_expired: 400,
  generation_unavailable: 400,
  before_floor: 400,
  invalid_body: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  not_acceptable: 406,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  dataset_unavailable: 503,
  not_ready: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Response headers as name/value pairs, in the order they are written. */
export type HeaderPairs = ReadonlyArray<readonly [string, string]>;

const NO_HEADERS: HeaderPairs = [];

/**
 * An error meant for the caller. `param` names the one query parameter at fault, if any.
 * `headers` go out with its answer (Allow on a 405, Retry-After on a 429), so the error
 * is the whole answer: no handler builds an error response by hand.
 */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly headers: HeaderPairs = NO_HEADERS,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = ERROR_STATUS[code];
  }
}

/** 405 with the Allow header (RFC 9110 15.5.6); `allow` as it is written, e.g. `GET, HEAD`. */
export function methodNotAllowed(method: string, allow: string): ApiError {
  return new ApiError('method_not_allowed', `${method} is not allowed; use ${allow.replace(', ', ' or ')}`, undefined, [['Allow', allow]]);
}

export function invalidParam(param: string, message: string): ApiError {
  return new ApiError('invalid_parameter', message, param);
}
