import type { RecordId } from '../../http/record-id.js';
import type { ByteWriter } from '../bytes/byte-writer.js';
import { putDateQuoted, putIsoMicrosQuoted, putIsoMillisQuoted, MAX_DATE_BYTES, MAX_TIMESTAMP_BYTES } from '../bytes/format-time.js';
import { MAX_NUMBER_BYTES, putInt } from '../bytes/format-number.js';
import type { ExtensionValue, RequestStamp } from '../resolved-page.js';
import { writeJsonString } from './json-string.js';

/** What `metadata` says besides this request's own fields (a PageMeta is one). */
export interface MetadataFields {
  readonly totalCount: number;
  /** days since epoch -> "YYYY-MM-DD", or null */
  readonly dataLatestDate: number | null;
  /** names of the fields after the spec's: one list per endpoint, shared by every page */
  readonly extensionKeys: readonly string[];
  /** their values, one per name (names and values apart: no pair per field per request) */
  readonly extensionValues: readonly ExtensionValue[];
}

/** Everything the whole body says: the page's metadata fields and this request's own. */
export interface EnvelopeMeta extends MetadataFields {
  readonly productId: string;
  readonly count: number;
  /** the next page's cursor; null on the last page (has_more is whether there is one) */
  readonly nextCursor: string | null;
  /** -> metadata.retrieved_at, ISO 8601 UTC with milliseconds and Z */
  readonly retrievedAtUs: number;
  readonly recordId: string;
  /** a JSON number when finite, else null */
  readonly dataAgeHours: number | null;
}

/**
 * Writes the whole response body (spec 2.4, contract 4): product_id, count, has_more,
 * next_cursor (only when has_more), data (by the callback), metadata. Field order is fixed.
 */
export function writeEnvelope(out: ByteWriter, meta: EnvelopeMeta, writeData: (out: ByteWriter) => void): void {
  writeEnvelopeHead(out, meta.productId, meta.count, meta.nextCursor, true);
  writeData(out);
  writeEnvelopeMetadata(out, meta, meta.retrievedAtUs, meta.recordId, meta.dataAgeHours);
}

/**
 * Everything before `metadata`'s comma up to the `data` value: the part that depends only
 * on (generation, query), which the response cache keeps. `withData`: ends with `"data":`
 * for the caller to write the rows after (no callback: a closure per request); without, it
 * leaves the `data` key out (Arrow's schema metadata: the rows are the batch).
 */
export function writeEnvelopeHead(out: ByteWriter, productId: string, count: number, nextCursor: string | null, withData: boolean): void {
  out.ascii('{"product_id":');
  writeJsonString(out, productId);
  out.ascii(',"count":');
  out.int(count);
  // has_more is whether a next page has a cursor (contract 2): next_cursor only then.
  if (nextCursor === null) {
    out.ascii(',"has_more":false');
  } else {
    out.ascii(',"has_more":true,"next_cursor":');
    writeJsonString(out, nextCursor);
  }
  if (withData) out.ascii(',"data":');
}

// The literals before the per-request fields, written by writeEnvelopeMetadata and looked for
// by restampEnvelopeMetadata: one definition of the layout both depend on.
const METADATA_HEAD = Buffer.from(',"metadata":{"retrieved_at":', 'latin1');
const TOTAL_COUNT = Buffer.from(',"total_count":', 'latin1');
const RECORD_ID = Buffer.from(',"record_id":', 'latin1');
/** a retrieved_at of a 4-digit year, quoted: every one restampEnvelopeMetadata writes */
const STAMP_BYTES = 26;
/** where restampEnvelopeMetadata writes a new retrieved_at before it is known to fit */
const stampScratch = new Uint8Array(MAX_TIMESTAMP_BYTES);
const digitScratch = new Uint8Array(MAX_NUMBER_BYTES);

/** Whether `lit` is at buf[p..). Reads past the caller's end are harmless: nothing is written before every check has passed. */
function has(buf: Uint8Array, p: number, lit: Uint8Array): boolean {
  for (let i = 0; i < lit.length; i++) if (buf[p + i] !== lit[i]) return false;
  return true;
}

/**
 * Metadata that writeEnvelopeMetadata wrote for `meta` at buf[at..end), restamped in place
 * for another request: its retrieved_at and record_id rewritten, every other byte left as it
 * is. The caller vouches that nothing else in it moves between requests (the age is measured
 * from as_of, resolved-page.ts' ageIsFixed). Both fields keep their width (an instant of a
 * 4-digit year; a thread's ids are of one length), and the bytes around them are checked
 * to be where writeEnvelopeMetadata puts them: false, with nothing written, when anything
 * differs (the caller then writes the metadata anew).
 */
export function restampEnvelopeMetadata(buf: Uint8Array, at: number, end: number, meta: MetadataFields, stamp: RequestStamp): boolean {
  const { retrievedAtUs, recordId } = stamp;
  if (typeof recordId === 'string') return false;
  // The literals on either side of retrieved_at pin its width; those around record_id and the
  // digits between them pin where the id starts, and its closing quote where it ends.
  const stampAt = at + METADATA_HEAD.length;
  const countAt = stampAt + STAMP_BYTES;
  if (!has(buf, at, METADATA_HEAD) || !has(buf, countAt, TOTAL_COUNT)) return false;
  const digits = putInt(digitScratch, 0, meta.totalCount);
  const countEnd = countAt + TOTAL_COUNT.length;
  for (let i = 0; i < digits; i++) if (buf[countEnd + i] !== digitScratch[i]) return false;
  const idAt = countEnd + digits + RECORD_ID.length + 1;
  const idEnd = idAt + recordId.byteLength;
  if (!has(buf, countEnd + digits, RECORD_ID) || buf[idAt - 1] !== 0x22 || idEnd >= end || buf[idEnd] !== 0x22) return false;
  // The old id is [0-9a-z_] only: a quote before idEnd means it was shorter.
  for (let i = idAt; i < idEnd; i++) if (buf[i] === 0x22) return false;
  if (putIsoMillisQuoted(stampScratch, 0, retrievedAtUs) !== STAMP_BYTES) return false;
  for (let i = 0; i < STAMP_BYTES; i++) buf[stampAt + i] = stampScratch[i]!;
  buf.set(recordId, idAt);
  return true;
}

/** `,"metadata":{...}}`: the per-request end of the body (retrieved_at, record_id, age), with the page's fields. */
export function writeEnvelopeMetadata(out: ByteWriter, meta: MetadataFields, retrievedAtUs: number, recordId: RecordId, dataAgeHours: number | null): void {
  out.bytes(METADATA_HEAD);
  out.ensure(MAX_TIMESTAMP_BYTES);
  out.pos = putIsoMillisQuoted(out.buf, out.pos, retrievedAtUs);
  out.bytes(TOTAL_COUNT);
  out.int(meta.totalCount);
  out.bytes(RECORD_ID);
  if (typeof recordId === 'string') {
    writeJsonString(out, recordId);
  } else {
    // An id's bytes are `req_` and [0-9a-z] (RequestIds): nothing to escape.
    out.byte(0x22);
    out.bytes(recordId);
    out.byte(0x22);
  }
  out.ascii(',"data_latest_date":');
  if (meta.dataLatestDate === null) {
    out.null();
  } else {
    out.ensure(MAX_DATE_BYTES);
    out.pos = putDateQuoted(out.buf, out.pos, meta.dataLatestDate);
  }
  out.ascii(',"data_age_hours":');
  if (dataAgeHours === null) out.null();
  else out.float(dataAgeHours);
  const keys = meta.extensionKeys;
  const values = meta.extensionValues;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const value = values[i]!;
    out.byte(0x2c);
    writeJsonString(out, key);
    out.byte(0x3a);
    if (value === null) out.null();
    else if (typeof value === 'boolean') out.ascii(value ? 'true' : 'false');
    else if (typeof value === 'string') writeJsonString(out, value);
    else if (typeof value === 'number') out.float(value);
    else {
      // Written as bytes: formatting through Date and string edits cost a few % of a request.
      out.ensure(MAX_TIMESTAMP_BYTES);
      out.pos = putIsoMicrosQuoted(out.buf, out.pos, value.us);
    }
  }
  out.ascii('}}');
}
