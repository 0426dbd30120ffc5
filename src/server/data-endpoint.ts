import { ApiError } from '../errors.js';
import { encodeHead, encodeHeadAsync, finishEncoded, tailSize, type EncodedHead, type Encoding } from '../format/encoded-body.js';
import { appendEnvelopeHeaders, type HeaderList } from '../format/envelope-headers.js';
import { etagOf, ifNoneMatchHits } from '../format/etag.js';
import { CONTENT_TYPES, negotiateEncoding, negotiateFormat, type Format } from '../format/negotiate.js';
import { splitPresentation } from '../format/presentation.js';
import { parseProjection, projectionKey } from '../format/projection.js';
import type { HttpRequest } from '../http/types.js';
import { decodeCursor, encodeCursor } from '../query/cursor.js';
import { parseQuery } from '../query/parse-query.js';
import type { Query } from '../query/query.js';
import { resolvePage, type Resume } from '../query/resolve.js';
import { ByteWriter } from '../render/byte-writer.js';
import { InstantMicros, writeEnvelopeHead, writeEnvelopeMetadata } from '../render/envelope.js';
import type { Clock } from '../time/clock.js';
import type { DatasetRegistry } from './dataset-registry.js';
import type { DatasetSlot } from './dataset-slot.js';
import type { Generation } from './generation.js';
import { PageWriters, type PageMeta } from './page-writers.js';
import { ResponseCache } from './response-cache.js';

/** Why a dataset has nothing to serve, in words for the caller (details are in /admin/status and the log). */
const UNAVAILABLE: Readonly<Record<DatasetSlot['state'], string>> = {
  pending: 'not tried yet',
  loaded: 'no generation',
  missing: 'there is no snapshot at the source',
  refused: 'its snapshot was refused',
  unreachable: 'the snapshot source cannot be reached',
};

/** What a data request answers, before the transport: a 200 or a 304. */
export interface DataAnswer {
  readonly status: 200 | 304;
  readonly headers: HeaderList;
  readonly contentType: string;
  /** a view valid until the next call, or (async answers) owned */
  readonly body: Uint8Array;
  /** for metrics and the access log */
  readonly rows: number;
  readonly format: Format;
}

/** `GET /{product}/{dataset}`: the request in, the answer out (async only when a large body is compressed off-thread). */
export type DataEndpoint = (slot: DatasetSlot, req: HttpRequest, recordId: string) => DataAnswer | Promise<DataAnswer>;

export interface DataEndpointOptions {
  /** bytes of rendered bodies kept for repeated queries; 0 = none */
  readonly responseCacheBytes: number;
  /** bytes of rendered rows kept for overlapping queries (RowCache); 0 = none */
  readonly rowCacheBytes: number;
}

/** Bodies under this go out plain whatever Accept-Encoding says (contract 9 allows it; a header costs more than it saves). */
const COMPRESS_MIN_BYTES = 1024;
/**
 * Heads above this are compressed on libuv's thread pool, not on the serving thread: a
 * 3 MB JSON page takes about 10 ms at gzip level 1, long enough to stall every other
 * connection of the thread (bench/RESULTS.md, compression).
 */
const ASYNC_COMPRESS_BYTES = 256 * 1024;

const VARY: readonly [string, string] = ['vary', 'Accept, Accept-Encoding'];

/**
 * parse -> resolve -> write -> encode for data requests (contract 2, 4, 9). Which rows a
 * request gets (the query, its generation, its page) is decided once; how they are written
 * is the format's writer; the content coding is applied to the bytes that depend only on
 * (generation, request), and the per-request metadata is appended without re-encoding
 * (format/encoded-body.ts), so the response cache keeps encoded bodies too.
 */
export function createDataEndpoint(registry: DatasetRegistry, clock: Clock, options: DataEndpointOptions): DataEndpoint {
  const out = new ByteWriter(256 * 1024);
  const tail = new ByteWriter(2048);
  let encodedOut = Buffer.allocUnsafe(64 * 1024);
  const writers = new PageWriters(options.rowCacheBytes);
  const cache = options.responseCacheBytes > 0 ? new ResponseCache(options.responseCacheBytes) : null;

  function locate(slot: DatasetSlot, rawQuery: string): { query: Query; gen: Generation; resume: Resume } {
    const query = parseQuery(rawQuery, slot.product, slot.dataset);
    let gen = slot.current;
    if (gen === null && !registry.ready) throw new ApiError('not_ready', 'the server is still loading snapshots; retry shortly');
    if (gen === null) throw new ApiError('dataset_unavailable', `${slot.id} is not loaded: ${UNAVAILABLE[slot.state]}`);
    let resume: Resume = null;
    if (query.cursor !== null) {
      const c = decodeCursor(query.cursor);
      if (c === null || c.fingerprint !== query.fingerprint) {
        throw new ApiError('invalid_cursor', 'cursor is malformed or belongs to a different query', 'cursor');
      }
      gen = slot.find(c.generation);
      if (gen === null) throw new ApiError('cursor_expired', 'the snapshot generation of this cursor is no longer served; start the query again', 'cursor');
      resume = c;
    }
    return { query, gen, resume };
  }

  /** Resolves the page and writes the part of the body that depends only on (generation, request) into `out`. */
  function renderHead(slot: DatasetSlot, query: Query, gen: Generation, resume: Resume, format: Format, projection: readonly number[] | null, recordId: string): PageMeta {
    const table = gen.table;
    const page = resolvePage(table, query, resume);
    const t = query.asOfUs ?? Infinity;
    const next = page.next === null ? null : encodeCursor({ generation: gen.number, fingerprint: query.fingerprint, total: page.total, ...page.next });
    const meta: PageMeta = {
      count: page.count,
      totalCount: page.total,
      nextCursor: next,
      dataLatestDate: table.latestDateByThr.query(t),
      maxObserved: table.maxObservedByThr.query(t),
      asOfUs: query.asOfUs,
      generation: gen.number,
      extensions: [
        ['generation', gen.number],
        ['as_of', query.asOfUs === null ? null : new InstantMicros(query.asOfUs)],
        ['vintage_floor', slot.product.floor],
        ['floor_applied', query.asOfUs !== null && query.asOfUs < slot.floorUs],
      ],
    };
    out.reset();
    if (format === 'json') {
      writeEnvelopeHead(out, { productId: slot.product.id, count: page.count, hasMore: next !== null, nextCursor: next }, (w) =>
        writers.json(table, projection, w, page.rows, page.count),
      );
    } else if (format === 'csv') {
      writers.csv(table, projection, out, page.rows, page.count);
    } else {
      // The schema message holds this request's whole envelope, record id included.
      writers.arrow(table, projection, out, page.rows, page.count, envelopeJson(slot, meta, recordId));
    }
    return meta;
  }

  /** The per-request tail: JSON's `,"metadata":{...}}`; nothing for CSV and Arrow (their envelope is in headers). */
  function writeTail(meta: PageMeta, recordId: string, nowUs: number, format: Format): void {
    tail.reset();
    if (format !== 'json') return;
    writeEnvelopeMetadata(tail, {
      retrievedAtUs: nowUs,
      totalCount: meta.totalCount,
      recordId,
      dataLatestDate: meta.dataLatestDate,
      dataAgeHours: ageHours(meta, nowUs),
      extensions: meta.extensions,
    });
  }

  function envelopeJson(slot: DatasetSlot, meta: PageMeta, recordId: string): string {
    const w = new ByteWriter(1024);
    writeEnvelopeHead(w, { productId: slot.product.id, count: meta.count, hasMore: meta.nextCursor !== null, nextCursor: meta.nextCursor }, (x) => x.null());
    const nowUs = clock.now() * 1000;
    writeEnvelopeMetadata(w, { retrievedAtUs: nowUs, totalCount: meta.totalCount, recordId, dataLatestDate: meta.dataLatestDate, dataAgeHours: ageHours(meta, nowUs), extensions: meta.extensions });
    return w.view().toString().replace(',"data":null', '');
  }

  function headers(meta: PageMeta, req: HttpRequest, etag: string, encoding: Encoding | null): HeaderList {
    const h: HeaderList = [VARY, ['etag', etag]];
    if (encoding !== null) h.push(['content-encoding', encoding]);
    appendEnvelopeHeaders(h, { ...meta, dataAgeHours: ageHours(meta, clock.now() * 1000) }, req.path, req.rawQuery);
    return h;
  }

  /** head (identity bytes in `out`, or an encoded head) + tail -> the body, in reusable memory. */
  function assemble(head: Uint8Array | EncodedHead): Uint8Array {
    if (head instanceof Uint8Array) {
      if (tail.pos === 0) return head;
      const n = head.byteLength + tail.pos;
      if (encodedOut.length < n) encodedOut = Buffer.allocUnsafe(Math.max(n, encodedOut.length * 2));
      encodedOut.set(head, 0);
      encodedOut.set(tail.view(), head.byteLength);
      return encodedOut.subarray(0, n);
    }
    const n = head.bytes.byteLength + tailSize(head.encoding, tail.pos);
    if (encodedOut.length < n) encodedOut = Buffer.allocUnsafe(Math.max(n, encodedOut.length * 2));
    return encodedOut.subarray(0, finishEncoded(head, tail.view(), encodedOut));
  }

  return (slot, req, recordId) => {
    const p = splitPresentation(req.rawQuery);
    const format = negotiateFormat(p.format, req.accept);
    const { query, gen, resume } = locate(slot, p.rest);
    const table = gen.table;
    const projection = parseProjection(p.columns, table.columns.map((c) => c.name), table.seriesKey);
    let encoding = negotiateEncoding(req.acceptEncoding);
    const normalised = `${query.canonical}\u0001${format}\u0001${projectionKey(projection)}\u0001${encoding ?? ''}\u0001${query.cursor ?? ''}`;
    const etag = etagOf(slot.id, gen.number, normalised);
    if (ifNoneMatchHits(req.ifNoneMatch, etag)) {
      return { status: 304, headers: [VARY, ['etag', etag]], contentType: CONTENT_TYPES[format], body: new Uint8Array(0), rows: 0, format };
    }
    const nowUs = clock.now() * 1000;
    // Arrow carries the whole envelope (record id included) in its schema: never cached.
    const cacheKey = cache === null || format === 'arrow' ? null : `${slot.id}\u0001${gen.number}\u0001${normalised}`;
    const hit = cacheKey === null ? undefined : cache!.get(cacheKey);
    let meta: PageMeta;
    let head: Uint8Array | EncodedHead;
    if (hit !== undefined) {
      meta = hit.meta;
      head = hit.head;
    } else {
      meta = renderHead(slot, query, gen, resume, format, projection, recordId);
      const bytes = out.view();
      if (encoding !== null && bytes.byteLength + 256 < COMPRESS_MIN_BYTES) encoding = null;
      if (encoding !== null && bytes.byteLength > ASYNC_COMPRESS_BYTES) {
        const owned = Buffer.from(bytes);
        const enc = encoding;
        return encodeHeadAsync(owned, enc).then((encoded) => {
          if (cacheKey !== null) cache!.set(cacheKey, encoded, meta);
          writeTail(meta, recordId, nowUs, format);
          const body = Buffer.from(assemble(encoded));
          return { status: 200, headers: headers(meta, req, etag, enc), contentType: CONTENT_TYPES[format], body, rows: meta.count, format };
        });
      }
      head = encoding === null ? bytes : encodeHead(bytes, encoding);
      if (cacheKey !== null) cache!.admit(cacheKey, head, meta);
    }
    if (head instanceof Uint8Array) encoding = null;
    writeTail(meta, recordId, nowUs, format);
    return { status: 200, headers: headers(meta, req, etag, encoding), contentType: CONTENT_TYPES[format], body: assemble(head), rows: meta.count, format };
  };
}

function ageHours(meta: PageMeta, nowUs: number): number | null {
  return meta.maxObserved === null ? null : ((meta.asOfUs ?? nowUs) - meta.maxObserved) / 3_600_000_000;
}
