import { ResponseCache } from '../cache/response-cache.js';
import { ArrowFormatWriter } from '../format/arrow/arrow-writer.js';
import { CsvFormatWriter } from '../format/csv/csv-writer.js';
import { etagOf, ifNoneMatchHits } from '../format/etag.js';
import type { FormatWriter } from '../format/format-writer.js';
import { JsonFormatWriter } from '../format/json/json-writer.js';
import { negotiateEncoding, negotiateFormat, type Format } from '../format/negotiate.js';
import { splitPresentation } from '../format/presentation.js';
import { parseProjection, projectionKey } from '../format/projection.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import { GenerationUnavailableError } from '../generations/generation-supply.js';
import type { RecordId } from '../http/record-id.js';
import type { HttpRequest } from '../http/types.js';
import { PageResolver } from '../query/page-resolver.js';
import { VintagesResolver } from '../query/vintages-resolver.js';
import { WalkForwardResolver } from '../query/walk-forward-resolver.js';
import { allocateRowArena } from '../format/arenas/row-arena.js';
import { RowCache } from '../format/arenas/row-cache.js';
import { DEFAULT_ROW_ADMISSION } from '../format/arenas/row-doorkeeper.js';
import type { Clock } from '../time/clock.js';
import { AnswerContext, EMPTY } from './answer-context.js';
import { AnswerHeaders } from './answer-headers.js';
import { CachedAnswers } from './cached-answers.js';
import type { DataAnswer, DataEndpoint, DataEndpointOptions, DataEndpointShared } from './data-answer.js';
import { MissingGeneration, Pinned, pinRequest, type DataEndpointKind, type PinContext } from './data-page.js';
import { unavailable } from './generation-fetch.js';
import { PageScratch } from './page-scratch.js';
import { ownAcrossAwait, ownAnswer } from './ownership.js';
import { AnswerBuffers, WriteStage, type AnswerStage } from './write-stage.js';

/**
 * The data endpoints (contract 2, 4, 9, 10, 11), one per serving thread, as a pipeline of
 * small stages over one borrowed context (answer-context.ts): parse (presentation,
 * negotiation) -> pin (the query parsed and pinned to its generation, the projection, the
 * request key) -> a 304 for a matching If-None-Match -> the answer stage: resolve -> write
 * -> encode -> headers (write-stage.ts), wrapped by the response cache when it is on
 * (cached-answers.ts), which owns its lookup and its store. The thread's buffers, resolvers,
 * writers and caches are made here once.
 */
export function createDataEndpoint(registry: DatasetRegistry, clock: Clock, options: DataEndpointOptions, shared: DataEndpointShared = {}): DataEndpoint {
  const bufs = new AnswerBuffers();
  /** the request being answered, pinned, and the scratch it resolves in (one each, refilled per request) */
  const pinned = new Pinned({ rows: new PageResolver(), walkForward: new WalkForwardResolver(), vintages: new VintagesResolver(), page: new PageScratch() });
  const arena = shared.rowArena ?? (options.rowCacheBytes > 0 ? allocateRowArena(options.rowCacheBytes, DEFAULT_ROW_ADMISSION, options.pageCacheBytes) : null);
  // --response-cache-mb is split across the serving threads: each keeps its own.
  const responseCacheBytes = Math.floor(options.responseCacheBytes / options.workers);
  const rowCache = arena === null ? null : new RowCache(arena);
  const writers: Readonly<Record<Format, FormatWriter>> = {
    json: new JsonFormatWriter(rowCache),
    csv: new CsvFormatWriter(rowCache),
    arrow: new ArrowFormatWriter(),
  };
  /** the headers of the answer being written (one block, reused) */
  const headers = new AnswerHeaders(clock);
  const write = new WriteStage(bufs, headers, rowCache);
  const cached = responseCacheBytes > 0 ? new CachedAnswers(new ResponseCache(responseCacheBytes), write, bufs, headers, { clock, writers }) : null;
  const last: AnswerStage = cached ?? write;
  /** the request on its way (one, refilled per request) */
  const ctx = new AnswerContext();

  const supply = shared.supply ?? null;
  /** the synchronous path pins with nothing fetched; the asynchronous one with what it fetched */
  const direct: PinContext = { registry, supply, fetched: null };

  /** parse: who asks for what, in which format and coding, and the rest of the query for pin. */
  function parse(slot: DatasetSlot, req: HttpRequest, recordId: RecordId, kind: DataEndpointKind): string {
    ctx.slot = slot;
    ctx.req = req;
    ctx.recordId = recordId;
    ctx.kind = kind;
    const p = splitPresentation(req.rawQuery);
    ctx.format = negotiateFormat(p.format, req.accept);
    ctx.writer = writers[ctx.format];
    ctx.encoding = negotiateEncoding(req.acceptEncoding);
    ctx.columnsAsked = p.columns;
    return p.rest;
  }

  /** pin: the query parsed and pinned to its generation, the projection, and the request key. */
  function pin(rest: string, pinCtx: PinContext): void {
    const request = pinRequest(ctx.kind, pinned, pinCtx, ctx.slot, rest);
    const gen = request.gen;
    const table = gen.table;
    ctx.request = request;
    ctx.gen = gen;
    ctx.immutable = request.immutable;
    // The column names only for a projection: most requests name none.
    ctx.projection =
      ctx.columnsAsked === undefined
        ? null
        : parseProjection(
            ctx.columnsAsked,
            table.columns.map((c) => c.name),
            table.seriesKey,
          );
    // Its id and a digest of its floor and filters (dataset-slot.ts): an answer under others is not this one.
    ctx.dataset = ctx.slot.keyText;
    ctx.generation = gen.number;
    ctx.canonical = request.canonical;
    ctx.columns = projectionKey(ctx.projection);
    ctx.cursor = request.cursor;
    ctx.key.fill(ctx);
  }

  const answer = (slot: DatasetSlot, req: HttpRequest, recordId: RecordId, kind: DataEndpointKind, pinCtx: PinContext): DataAnswer | Promise<DataAnswer> => {
    pin(parse(slot, req, recordId, kind), pinCtx);
    // The ETag as a string only for a conditional request; every answer writes it as digits.
    if (req.ifNoneMatch !== '' && ifNoneMatchHits(req.ifNoneMatch, etagOf(ctx.key))) {
      return ctx.answered(304, headers.validators(ctx.key, ctx.immutable), EMPTY, 0);
    }
    ctx.stamp.retrievedAtUs = clock.now() * 1000;
    ctx.stamp.recordId = recordId;
    return last.answer(ctx);
  };

  /**
   * A request naming a generation this thread does not hold: fetch it (the loading thread
   * loads it from history/ once, whoever asks), then answer as usual with it. What the
   * answer needs after the fetch is owned (ownership.ts), and so is its body.
   */
  const fetchThenAnswer = (
    missing: MissingGeneration,
    slot: DatasetSlot,
    req: HttpRequest,
    recordId: RecordId,
    kind: DataEndpointKind,
  ): Promise<DataAnswer> => {
    if (supply === null)
      return Promise.reject(
        unavailable(missing, new GenerationUnavailableError('gone', `generation ${missing.number} of ${slot.id} is not held by this server`)),
      );
    const own = ownAcrossAwait({ req, recordId, key: null, stamp: null, meta: null });
    return supply.fetch(slot, missing.number).then(
      (fetched) => {
        const a = answer(slot, own.req, own.recordId, kind, { registry, supply, fetched });
        return isPromise(a) ? a : ownAnswer(a);
      },
      (e: unknown) => {
        throw unavailable(missing, e);
      },
    );
  };

  const endpoint = (slot: DatasetSlot, req: HttpRequest, recordId: RecordId, kind: DataEndpointKind = 'rows'): DataAnswer | Promise<DataAnswer> => {
    try {
      if (cached !== null) {
        ctx.slot = slot;
        ctx.req = req;
        ctx.recordId = recordId;
        const again = cached.recall(ctx);
        if (again !== null) return again;
      }
      return answer(slot, req, recordId, kind, direct);
    } catch (e) {
      // The fetch outlives the transport's request object and the id's bytes (types.ts, record-id.ts).
      if (e instanceof MissingGeneration) return fetchThenAnswer(e, slot, req, recordId, kind);
      throw e;
    }
  };
  return Object.assign(endpoint, {
    cacheStats: () => ({ response: cached?.stats() ?? null, rows: rowCache?.stats() ?? null }),
  });
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown }).then === 'function';
}
