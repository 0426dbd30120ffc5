import type { ApiError } from '../../errors.js';

/**
 * The body of an error response (contract 5):
 * `{"error":{"status":400,"code":"...","message":"...","param":"..."},"record_id":"req_..."}`,
 * `param` only when one parameter is at fault. Errors are rare: plain JSON.stringify.
 */
export function renderError(err: ApiError, recordId: string): Uint8Array {
  const error: { status: number; code: string; message: string; param?: string } = {
    status: err.status,
    code: err.code,
    message: err.message,
  };
  if (err.param !== undefined) error.param = err.param;
  return Buffer.from(JSON.stringify({ error, record_id: recordId }), 'utf8');
}
