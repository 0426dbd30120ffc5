/**
 * A request's id, as x-request-id and the body's record_id carry it: a string, or the
 * serving thread's id bytes (RequestIds.advance: `req_` and 18 characters of [0-9a-z]),
 * refilled by the next request. Bytes are valid like the transport's request object: until
 * the handler returns or first awaits. An answer that comes later takes `recordIdText` of
 * it before it awaits, as it takes `ownedRequest` of the request. A string per request was
 * a sixth of what a data request allocated (near-zero allocation: docs/decisions.md#allocation); the header and
 * the JSON envelope write the bytes as they are, and only error bodies and log lines, which
 * are rarer, make the string.
 */
export type RecordId = string | Uint8Array;

/** The id as a string of its own (one to keep past an await, or to log). */
export function recordIdText(id: RecordId): string {
  return typeof id === 'string' ? id : Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('latin1');
}
