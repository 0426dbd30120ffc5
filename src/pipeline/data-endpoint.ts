import { ArrowFormatWriter } from '../format/arrow/arrow-writer.js';
import { CsvFormatWriter } from '../format/csv/csv-writer.js';
import { encodeHead, encodeHeadAsync, type Encoding } from '../format/encoded-body.js';
import { etagOf, ifNoneMatchHits } from '../format/etag.js';
import type { FormatWriter } from '../format/format-writer.js';
import { JsonFormatWriter } from '../format/json/json-writer.js';
import { negotiateEncoding, negotiateFormat, type Format } from '../format/negotiate.js';
import type { OutputColumn } from '../format/page-view.js';
import { splitPresentation } from '../format/presentation.js';
import { parseProjection, projectionKey } from '../format/projection.js';
import { ageIsFixed, ownedMeta, type PageMeta, type RequestStamp, type ResolvedPage } from '../format/resolved-page.js';
import { ownedBlock, type HeaderBlock } from '../http/header-block.js';
import { recordIdText, type RecordId } from '../http/record-id.js';
import { ownedRequest, type HttpRequest } from '../http/types.js';
import { PageResolver } from '../query/page-resolver.js';
import { VintagesResolver } from '../query/vintages-resolver.js';
import { WalkForwardResolver } from '../query/walk-forward-resolver.js';
import { ByteWriter } from '../render/byte-writer.js';
import { allocateRowArena } from '../render/row-arena.js';
import { DEFAULT_ROW_ADMISSION } from '../render/row-doorkeeper.js';
import { RowCache } from '../render/row-cache.js';
import type { Clock } from '../time/clock.js';
import { AnswerHeaders } from './answer-headers.js';
import type { DataAnswer, DataEndpoint, DataEndpointOptions } from './data-answer.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import { MissingGeneration, Pinned, pinRequest, type DataEndpointKind, type PinContext } from './data-page.js';
import type { Generation } from '../generations/generation.js';
import { unavailable } from './generation-fetch.js';
import { GenerationUnavailableError } from '../generations/generation-supply.js';
import { BodyAssembler } from '../cache/body-assembler.js';
import { PageScratch } from './page-scratch.js';
import { RequestKey } from '../cache/request-key.js';
import { ResponseCache, type CachedHead } from '../cache/response-cache.js';
import type { Mutable } from '../mutable.js';

/** Bodies under this go out plain whatever Accept-Encoding says (contract 9 allows it; a header costs more than it saves). */
const COMPRESS_MIN_BYTES = 1024;
/**
 * Heads above this are compressed on libuv's thread pool, not on the serving thread: a
 * 3 MB JSON page takes about 10 ms at gzip level 1, long enough to stall every other
 * connection of the thread (bench/RESULTS.md, compression).
 */
const ASYNC_COMPRESS_BYTES = 256 * 1024;

/** the prefix of formats without one, and the body of a 304 (never written to) */
const EMPTY = new Uint8Array(0);

/** The stored part of the output layout: the generation's own list for every column (one array, found by identity), or a projection. */
function layoutOf(gen: Generation, projection: readonly number[] | null): readonly OutputColumn[] {
  return projection === null ? gen.outputColumns : projection.map((i) => gen.outputColumns[i]!);
}

/**
 * parse -> resolve -> write -> encode for data requests (contract 2, 4, 9), one per serving
 * thread: it owns the thread's buffers, page resolver, format writers and caches.
 *
 * parse (splitPresentation, negotiate, locateQuery, parseProjection) pins the generation
 * and the normalised request; a response-cache hit then needs no more than its per-request
 * prefix and suffix; otherwise resolve (resolveDataPage) gives the page's row ids and
 * envelope once, and the request's FormatWriter writes them. The content coding is applied
 * to the middle, the bytes that depend only on (generation, request), and the per-request
 * prefix and suffix are put around it without re-encoding (format/encoded-body.ts), so the
 * cache keeps encoded middles too. Not with brotli and a prefix (Arrow): see below.
 */
export function createDataEndpoint(registry: DatasetRegistry, clock: Clock, options: DataEndpointOptions): DataEndpoint {
  /** a miss: prefix + middle; a hit: the prefix */
  const out = new ByteWriter(256 * 1024);
  /** the suffix */
  const tail = new ByteWriter(2048);
  const bodies = new BodyAssembler();
  /** the request being answered, pinned, and the scratch it resolves in (one each, refilled per request) */
  const pinned = new Pinned({ rows: new PageResolver(), walkForward: new WalkForwardResolver(), vintages: new VintagesResolver(), page: new PageScratch() });
  const arena =
    options.rowArena ?? (options.rowCacheBytes > 0 ? allocateRowArena(options.rowCacheBytes, DEFAULT_ROW_ADMISSION, options.pageCacheBytes ?? 0) : null);
  const rowCache = arena === null ? null : new RowCache(arena);
  const writers: Readonly<Record<Format, FormatWriter>> = {
    json: new JsonFormatWriter(rowCache),
    csv: new CsvFormatWriter(rowCache),
    arrow: new ArrowFormatWriter(),
  };
  const cache = options.responseCacheBytes > 0 ? new ResponseCache(options.responseCacheBytes) : null;

  const supply = options.supply ?? null;
  /** the synchronous path pins with nothing fetched; the asynchronous one with what it fetched */
  const direct: PinContext = { registry, supply, fetched: null };

  /** the headers of the answer being written (one block, reused) */
  const answerHeaders = new AnswerHeaders(clock);
  /** the normalised request being answered (one, refilled per request) */
  const key = new RequestKey();
  /** when and as which record the request is answered (one, refilled per request; an answer finished later keeps a copy) */
  const stamp: Mutable<RequestStamp> = { retrievedAtUs: 0, recordId: '' };

  /** the answer given at once (one, refilled per request, like its header block and body) */
  const now: Mutable<DataAnswer> = { status: 200, headerBlock: { first: '', rest: EMPTY }, contentType: '', body: EMPTY, rows: 0, format: 'json' };
  function answered(status: 200 | 304, headerBlock: HeaderBlock, contentType: string, body: Uint8Array, rows: number, format: Format): DataAnswer {
    now.status = status;
    now.headerBlock = headerBlock;
    now.contentType = contentType;
    now.body = body;
    now.rows = rows;
    now.format = format;
    return now;
  }

  /**
   * A hit's headers: those its entry keeps, or written and, when they depend on nothing but
   * the entry, kept with it for the next hits. ETag, content-encoding and cache-control
   * follow from the key the entry matched (as_of and generation are in its canonical text);
   * what else could differ between two hits is the age without an as_of (it moves with the
   * clock) and the Link of a page with a next one (it repeats the request's own query, whose
   * parameters may come in another order).
   */
  function hitHeaders(hit: CachedHead, req: HttpRequest, immutable: boolean): HeaderBlock {
    if (hit.headers !== null) return hit.headers;
    const block = answerHeaders.answer(hit.meta, req, key, hit.encoding, immutable);
    if (hit.meta.nextCursor === null && ageIsFixed(hit.meta)) cache!.keepHeaders(hit, block);
    return block;
  }

  /** A hit's body put together: its prefix and suffix written for this request around the kept middle. */
  function hitBody(writer: FormatWriter, hit: CachedHead): Uint8Array {
    out.reset();
    writer.writePrefix(out, hit.meta, hit.shape, stamp);
    writeSuffix(writer, hit.meta, stamp);
    return bodies.hit(cache!, hit, out.pos === 0 ? EMPTY : out.view(), tail.view());
  }

  function writeSuffix(writer: FormatWriter, meta: PageMeta, stamp: RequestStamp): void {
    tail.reset();
    writer.writeSuffix(tail, meta, stamp);
  }

  /** The page's middle after its prefix in `out`; returns where the middle starts. */
  function writeBody(writer: FormatWriter, page: ResolvedPage, shape: unknown, stamp: RequestStamp): number {
    out.reset();
    writer.writePrefix(out, page.meta, shape, stamp);
    const at = out.pos;
    writer.writeMiddle(out, page);
    return at;
  }

  /**
   * A request naming a generation this thread does not hold: fetch it (the loading thread
   * loads it from history/ once, whoever asks), then answer as usual with it. The request's
   * fields are plain values (read before any await); the body of an async answer is owned.
   */
  const fetchThenAnswer = (missing: MissingGeneration, slot: DatasetSlot, req: HttpRequest, recordId: string, kind: DataEndpointKind): Promise<DataAnswer> => {
    if (supply === null)
      return Promise.reject(
        unavailable(missing, new GenerationUnavailableError('gone', `generation ${missing.number} of ${slot.id} is not held by this server`)),
      );
    return supply.fetch(slot, missing.number).then(
      (fetched) => {
        const a = answer(slot, req, recordId, kind, { registry, supply, fetched });
        return isPromise(a) ? a : { ...a, headerBlock: ownedBlock(a.headerBlock), body: Buffer.from(a.body) };
      },
      (e: unknown) => {
        throw unavailable(missing, e);
      },
    );
  };

  /**
   * A large body compressed on the thread pool (ASYNC_COMPRESS_BYTES): what the answer
   * needs after the await is owned (body, request, key, meta, stamp), since other requests
   * refill the thread's scratch and the transport's request object meanwhile.
   */
  function answerLater(
    writer: FormatWriter,
    bytes: Uint8Array,
    split: number,
    encoding: Encoding,
    meta: PageMeta,
    shape: unknown,
    req: HttpRequest,
    immutable: boolean,
    format: Format,
    cached: boolean,
  ): Promise<DataAnswer> {
    const owned = Buffer.from(bytes);
    const ownReq = ownedRequest(req);
    const ownKey = key.copy();
    const ownStamp: RequestStamp = { retrievedAtUs: stamp.retrievedAtUs, recordId: recordIdText(stamp.recordId) };
    return encodeHeadAsync(owned.subarray(split), encoding).then((encoded) => {
      if (cached) cache!.set(ownKey, encoded, meta, shape);
      writeSuffix(writer, meta, ownStamp);
      const body = Buffer.from(bodies.encoded(encoded, owned.subarray(0, split), tail.view()));
      const headerBlock = ownedBlock(answerHeaders.answer(meta, ownReq, ownKey, encoding, immutable));
      return { status: 200, headerBlock, contentType: writer.contentType, body, rows: meta.count, format };
    });
  }

  /**
   * A request of exactly the text (path, query, Accept, Accept-Encoding) that an entry was
   * last answered whole for, while the dataset's current generation is still the entry's:
   * answered from the entry without parsing, negotiating or normalising it again. Such an
   * entry keeps its headers and restamps its suffix, so its answer depends on nothing else.
   * A request with If-None-Match, or one the entry's writer cannot restamp, goes the whole way.
   */
  function askedBefore(slot: DatasetSlot, req: HttpRequest, recordId: RecordId): DataAnswer | null {
    const gen = slot.current;
    if (req.ifNoneMatch !== '' || gen === null) return null;
    const hit = cache!.recall(req.path, req.rawQuery, req.accept, req.acceptEncoding, gen.number);
    if (hit === undefined) return null;
    const format = hit.key.format as Format;
    const writer = writers[format];
    stamp.retrievedAtUs = clock.now() * 1000;
    stamp.recordId = recordId;
    const body = cache!.restampedBody(hit, writer, stamp);
    if (body === null) return null;
    cache!.counted(hit);
    return answered(200, hit.headers!, writer.contentType, body, hit.meta.count, format);
  }

  const endpoint = (slot: DatasetSlot, req: HttpRequest, recordId: RecordId, kind: DataEndpointKind = 'rows'): DataAnswer | Promise<DataAnswer> => {
    try {
      const again = cache === null ? null : askedBefore(slot, req, recordId);
      if (again !== null) return again;
      return answer(slot, req, recordId, kind, direct);
    } catch (e) {
      // The fetch outlives the transport's request object and the id's bytes (types.ts, record-id.ts): copies answer after it.
      if (e instanceof MissingGeneration) return fetchThenAnswer(e, slot, ownedRequest(req), recordIdText(recordId), kind);
      throw e;
    }
  };

  const answer = (slot: DatasetSlot, req: HttpRequest, recordId: RecordId, kind: DataEndpointKind, ctx: PinContext): DataAnswer | Promise<DataAnswer> => {
    const p = splitPresentation(req.rawQuery);
    const format = negotiateFormat(p.format, req.accept);
    const request = pinRequest(kind, pinned, ctx, slot, p.rest);
    const gen = request.gen;
    const immutable = request.immutable;
    const table = gen.table;
    // The column names only for a projection: most requests name none.
    const projection =
      p.columns === undefined
        ? null
        : parseProjection(
            p.columns,
            table.columns.map((c) => c.name),
            table.seriesKey,
          );
    let encoding = negotiateEncoding(req.acceptEncoding);
    key.fill(slot.id, gen.number, request.canonical, format, projectionKey(projection), encoding, request.cursor);
    const writer = writers[format];
    // The ETag as a string only for a conditional request; every answer writes it as digits.
    if (req.ifNoneMatch !== '' && ifNoneMatchHits(req.ifNoneMatch, etagOf(key))) {
      return answered(304, answerHeaders.validators(key, immutable), writer.contentType, EMPTY, 0, format);
    }
    stamp.retrievedAtUs = clock.now() * 1000;
    stamp.recordId = recordId;
    // A prefix cannot go in front of a cached brotli middle (encoded-body.ts: the stream
    // header is bit-packed into the first meta-block, and bytes in front would turn its
    // static-dictionary references into copies of the prefix): such answers are written and
    // compressed whole, per request, and never cached.
    const wholeBr = writer.prefixed && encoding === 'br';
    const cached = cache !== null && !wholeBr;
    const hit = cached ? cache.get(key) : undefined;
    if (hit !== undefined) {
      // Where nothing in the suffix but the stamp moves, the one the entry's last hit left in the arena is restamped.
      const again = ageIsFixed(hit.meta) ? cache!.restampedBody(hit, writer, stamp) : null;
      const headerBlock = hitHeaders(hit, req, immutable);
      // Answered whole from the entry: the next request of this very text needs no parsing (askedBefore).
      if (again !== null && hit.headers !== null) cache!.remember(hit, req.path, req.rawQuery, req.accept, req.acceptEncoding);
      return answered(200, headerBlock, writer.contentType, again ?? hitBody(writer, hit), hit.meta.count, format);
    }
    // Row writers tag their text by this generation's uid (cheap once it is known).
    rowCache?.register(gen.uid, table.columns);
    const page = request.resolve(layoutOf(gen, projection));
    const meta = page.meta;
    const shape = writer.shapeOf(page.view);
    const middleAt = writeBody(writer, page, shape, stamp);
    const middleEnd = out.pos;
    if (encoding !== null && middleEnd + 256 < COMPRESS_MIN_BYTES) encoding = null;
    // What is encoded and kept starts at the middle, or at 0 when the whole body is compressed (then nothing is kept).
    const split = wholeBr ? 0 : middleAt;
    let body: Uint8Array;
    if (encoding === null) {
      // Identity: the suffix goes right after the middle, and the body is `out` itself: no
      // copy of the whole answer into a second buffer, and one view (the cache copies the
      // middle out of it).
      writer.writeSuffix(out, meta, stamp);
      body = out.view();
      if (cached) cache.admit(key, body, meta, shape, split, middleEnd);
    } else {
      const bytes = out.view();
      if (bytes.byteLength > ASYNC_COMPRESS_BYTES) return answerLater(writer, bytes, split, encoding, ownedMeta(meta), shape, req, immutable, format, cached);
      // No prefix (JSON, CSV): no view made.
      const head = encodeHead(split === 0 ? bytes : bytes.subarray(split), encoding);
      if (cached) cache.admit(key, head, meta, shape);
      writeSuffix(writer, meta, stamp);
      body = bodies.encoded(head, split === 0 ? EMPTY : bytes.subarray(0, split), tail.view());
    }
    return answered(200, answerHeaders.answer(meta, req, key, encoding, immutable), writer.contentType, body, meta.count, format);
  };
  return Object.assign(endpoint, {
    cacheStats: () => ({ response: cache?.stats() ?? null, rows: rowCache?.stats() ?? null }),
  });
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown }).then === 'function';
}
