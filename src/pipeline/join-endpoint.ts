import { brotliCompress, constants as zlibConstants, gunzip, gzip } from 'node:zlib';
import type { Encoding } from '../format/encoded-body.js';
import { writeEnvelopeHeaders } from '../format/envelope-headers.js';
import { HeaderWriter } from '../format/header-writer.js';
import { CONTENT_TYPES, negotiateEncoding, negotiateFormat } from '../format/negotiate.js';
import { splitPresentation } from '../format/presentation.js';
import { dataAgeHours } from '../format/resolved-page.js';
import { ApiError } from '../errors.js';
import { ownedBlock } from '../http/header-block.js';
import { BodyAborted, BodyTooLarge, type HttpRequest } from '../http/types.js';
import { MAX_EVENTS } from '../join/event-batch.js';
import { computeJoin, joinMeta, type BodyFormat, type JoinRequest } from '../join/join-compute.js';
import { parseJoinQuery } from '../join/parse-join-query.js';
import type { Clock } from '../time/clock.js';
import type { DataAnswer } from './data-answer.js';
import { MissingGeneration, pin, type LocatedQuery, type PinContext, type PinnableQuery } from './data-page.js';
import type { DatasetRegistry } from '../generations/dataset-registry.js';
import type { DatasetSlot } from '../generations/dataset-slot.js';
import type { Generation } from '../generations/generation.js';
import { unavailable } from './generation-fetch.js';
import type { GenerationSupply } from '../generations/generation-supply.js';
import type { JoinRunner } from './join-runner.js';
import type { Mutable } from '../mutable.js';

/** Contract 15: the body as sent, before gzip is undone. */
export const MAX_BODY_BYTES = 256 * 1024 * 1024;
/** A gzip body undone past this is refused (413): it bounds the memory a small body can claim. */
const MAX_INFLATED_BYTES = 1024 * 1024 * 1024;
/** Bodies under this go out plain whatever Accept-Encoding says (as data-endpoint.ts). */
const COMPRESS_MIN_BYTES = 1024;
/** Where joins are computed: bodies up to `inlineBytes` here, larger ones on `runner` (null: every join here). */
export interface JoinPlacement {
  readonly runner: JoinRunner | null;
  readonly inlineBytes: number;
}

/** `POST /{product}/{dataset}/asof_join` (contract 15): the request in, the answer (always later: the body comes first) out. */
export type JoinEndpoint = (slot: DatasetSlot, req: HttpRequest, recordId: string) => Promise<DataAnswer>;

/**
 * parse (query, headers) -> read the body -> events -> join -> write, for the join of one
 * serving thread. Everything the request needs after the body has come is read from it
 * before (uWS: the request object is gone after the handler returns); the answer is owned.
 * The 400s of the query, an unusable Content-Type or Content-Encoding (415) and an
 * announced body over the limit (413) are answered before any of the body is read. A large
 * body is joined off this thread (join-runner.ts), and stopped there if its client goes away.
 */
export function createJoinEndpoint(
  registry: DatasetRegistry,
  clock: Clock,
  supply: GenerationSupply | null,
  placement: JoinPlacement = { runner: null, inlineBytes: Infinity },
): JoinEndpoint {
  const headers = new HeaderWriter();

  return (slot, req, recordId) => {
    const p = splitPresentation(req.rawQuery);
    const format = negotiateFormat(p.format, req.accept);
    const query = parseJoinQuery(p.rest, slot.product);
    const columnsParam = p.columns;
    const encoding = negotiateEncoding(req.acceptEncoding);
    const body = req.body;
    if (body === undefined) throw new ApiError('invalid_body', 'asof_join takes the events as the request body');
    const bodyFormat = bodyFormatOf(body.contentType);
    const gzipped = contentEncodingOf(body.contentEncoding);
    if (/^\d+$/.test(body.contentLength) && Number(body.contentLength) > MAX_BODY_BYTES) throw tooLarge();
    const path = req.path;
    const rawQuery = req.rawQuery;
    const gone = body.gone;
    const read = body.read(MAX_BODY_BYTES);
    return read
      .then(
        (bytes) => (gzipped ? inflate(bytes) : bytes),
        (e: unknown) => {
          if (e instanceof BodyTooLarge) throw tooLarge();
          if (e instanceof BodyAborted) throw new ApiError('invalid_body', 'the body did not arrive whole');
          throw e;
        },
      )
      .then(async (bytes) => {
        const gen = await generationOf(slot, query.generation);
        const table = gen.table;
        const request: JoinRequest = {
          bodyFormat,
          format,
          columns: columnsParam,
          maxAgeDays: query.maxAgeDays,
          beforeFloor: query.beforeFloor,
          product: slot.product,
          floorUs: slot.floorUs,
          generation: gen.number,
          retrievedAtUs: clock.now() * 1000,
          recordId,
        };
        const runner = placement.runner;
        const out =
          runner === null || bytes.byteLength <= placement.inlineBytes
            ? computeJoin(table, bytes, request)
            : await runner.run(table, gen.uid, bytes, request, gone);
        const meta = joinMeta(table, request, out.count, out.matched, out.anyBeforeFloor);
        let payload: Uint8Array = out.body;
        let used: Encoding | null = encoding !== null && payload.byteLength >= COMPRESS_MIN_BYTES ? encoding : null;
        // The answer is this request's own (computed for it): owned as an async answer must be.
        if (used !== null) payload = await compressed(payload, used);
        headers.reset();
        headers.start('vary').ascii('Accept, Accept-Encoding');
        if (used !== null) headers.start('content-encoding').ascii(used);
        writeEnvelopeHeaders(headers, meta, dataAgeHours(meta, clock.now() * 1000), path, rawQuery);
        used = null;
        return { status: 200 as const, headerBlock: ownedBlock(headers.block()), contentType: CONTENT_TYPES[format], body: payload, rows: out.count, format };
      });
  };

  /** The generation answering: `generation=N` (fetched if this thread does not hold it) or the current one. */
  async function generationOf(slot: DatasetSlot, wanted: number | null): Promise<Generation> {
    const ctx: PinContext = { registry, supply, fetched: null };
    const query: PinnableQuery = { canonical: '', fingerprint: 0, cursor: null, generation: wanted };
    const into = {} as Mutable<LocatedQuery<PinnableQuery>>;
    try {
      pin(ctx, slot, query, into);
      return into.gen;
    } catch (e) {
      if (!(e instanceof MissingGeneration)) throw e;
      if (supply === null) throw new ApiError('generation_unavailable', `generation ${e.number} of ${slot.id} is not held by this server`, 'generation');
      try {
        return await supply.fetch(slot, e.number);
      } catch (f) {
        throw unavailable(e, f);
      }
    }
  }
}

function tooLarge(): ApiError {
  return new ApiError('payload_too_large', `the body is larger than ${MAX_BODY_BYTES} bytes (256 MiB as sent); send at most ${MAX_EVENTS} events per request`);
}

/** text/csv, application/json or application/vnd.apache.arrow.stream (parameters such as charset allowed); else 415. */
function bodyFormatOf(contentType: string): BodyFormat {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'text/csv') return 'csv';
  if (type === 'application/json') return 'json';
  if (type === 'application/vnd.apache.arrow.stream' || type === 'application/vnd.apache.arrow.file') return 'arrow';
  throw new ApiError(
    'unsupported_media_type',
    `Content-Type must be text/csv, application/json or application/vnd.apache.arrow.stream (the events), not ${JSON.stringify(contentType)}`,
  );
}

function contentEncodingOf(contentEncoding: string): boolean {
  const e = contentEncoding.trim().toLowerCase();
  if (e === '' || e === 'identity') return false;
  if (e === 'gzip' || e === 'x-gzip') return true;
  throw new ApiError('unsupported_media_type', `Content-Encoding must be gzip (or none), not ${JSON.stringify(contentEncoding)}`);
}

/** gzip undone on the thread pool, bounded (a small body cannot claim unbounded memory). */
function inflate(bytes: Uint8Array): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    gunzip(bytes, { maxOutputLength: MAX_INFLATED_BYTES }, (err, out) => {
      if (err === null) resolve(out);
      else if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        reject(new ApiError('payload_too_large', `the body, gzip undone, is larger than ${MAX_INFLATED_BYTES} bytes`));
      else reject(new ApiError('invalid_body', `Content-Encoding says gzip, but the body is not gzip: ${err.message}`));
    });
  });
}

/** The whole answer compressed on the thread pool (it has no cached middle to keep). */
function compressed(bytes: Uint8Array, encoding: Encoding): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, out: Buffer): void => (err === null ? resolve(out) : reject(err));
    if (encoding === 'gzip') gzip(bytes, { level: 1 }, done);
    else brotliCompress(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4, [zlibConstants.BROTLI_PARAM_SIZE_HINT]: bytes.byteLength } }, done);
  });
}
