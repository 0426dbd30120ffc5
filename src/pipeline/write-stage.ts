import { BodyAssembler } from '../cache/body-assembler.js';
import type { RequestKey } from '../cache/request-key.js';
import type { FreshAnswer } from '../cache/response-cache.js';
import { encodeHead, encodeHeadAsync, type EncodedHead, type Encoding } from '../format/encoded-body.js';
import type { OutputColumn } from '../format/page-view.js';
import type { PageMeta } from '../format/resolved-page.js';
import type { Generation } from '../generations/generation.js';
import { ownedBlock } from '../http/header-block.js';
import { ByteWriter } from '../format/bytes/byte-writer.js';
import type { RowCache } from '../format/arenas/row-cache.js';
import { EMPTY, type AnswerContext } from './answer-context.js';
import type { AnswerHeaders } from './answer-headers.js';
import type { DataAnswer } from './data-answer.js';
import { ownAcrossAwait, type Owned } from './ownership.js';

/** Bodies under this go out plain whatever Accept-Encoding says (contract 9 allows it; a header costs more than it saves). */
const COMPRESS_MIN_BYTES = 1024;
/**
 * Heads above this are compressed on libuv's thread pool, not on the serving thread: a
 * 3 MB JSON page takes about 10 ms at gzip level 1, long enough to stall every other
 * connection of the thread (bench/RESULTS.md, compression).
 */
const ASYNC_COMPRESS_BYTES = 256 * 1024;

/** The last stage of the pipeline: a parsed and pinned request (its context) answered. */
export interface AnswerStage {
  answer(ctx: AnswerContext): DataAnswer | Promise<DataAnswer>;
  /** An answer kept for exactly this request's text (path, query, Accept, Accept-Encoding), before any parsing; null when none is. */
  recall(ctx: AnswerContext): DataAnswer | null;
}

/**
 * Who hears of a freshly written middle (the response cache's wrapper): the bytes that
 * depend only on (generation, request), identity `bytes[start..end)` or encoded.
 */
export interface KeepSink {
  keep(ctx: AnswerContext, bytes: Uint8Array | EncodedHead, start: number, end: number): void;
  /** an encoding finished off-thread, with the request's key and figures owned */
  keepLater(key: Owned<RequestKey>, fresh: FreshAnswer, head: EncodedHead): void;
}

/**
 * The buffers a serving thread writes answers in (one each, reused by every answer, so
 * bodies are views valid until the next one): the prefix and middle, the suffix, and the
 * whole body put together around an encoded or kept middle.
 */
export class AnswerBuffers {
  /** a miss: prefix + middle; a hit: the prefix */
  readonly out = new ByteWriter(256 * 1024);
  /** the suffix */
  readonly tail = new ByteWriter(2048);
  readonly bodies = new BodyAssembler();
}

/** The stored part of the output layout: the generation's own list for every column (one array, found by identity), or a projection. */
function layoutOf(gen: Generation, projection: readonly number[] | null): readonly OutputColumn[] {
  return projection === null ? gen.outputColumns : projection.map((i) => gen.outputColumns[i]!);
}

/**
 * resolve -> write -> encode -> headers, for a request no kept answer serves. The content
 * coding is applied to the middle, the bytes that depend only on (generation, request), and
 * the per-request prefix and suffix are put around it without re-encoding
 * (format/encoded-body.ts), so a cache can keep encoded middles too. Not with brotli and a
 * prefix (Arrow): see `wholeBrotli`.
 */
export class WriteStage implements AnswerStage {
  constructor(
    private readonly bufs: AnswerBuffers,
    private readonly headers: AnswerHeaders,
    private readonly rowCache: RowCache | null,
  ) {}

  answer(ctx: AnswerContext): DataAnswer | Promise<DataAnswer> {
    return this.write(ctx, null);
  }

  recall(): DataAnswer | null {
    return null;
  }

  /** The answer written; `sink` (when given) hears of its middle. */
  write(ctx: AnswerContext, sink: KeepSink | null): DataAnswer | Promise<DataAnswer> {
    const { writer, gen, stamp } = ctx;
    const out = this.bufs.out;
    // Row writers tag their text by this generation's uid (cheap once it is known).
    this.rowCache?.register(gen.uid, gen.table.columns);
    const page = ctx.request.resolve(layoutOf(gen, ctx.projection));
    const meta = page.meta;
    ctx.meta = meta;
    ctx.shape = writer.shapeOf(page.view);
    out.reset();
    writer.writePrefix(out, meta, ctx.shape, stamp);
    const middleAt = out.pos;
    writer.writeMiddle(out, page);
    const middleEnd = out.pos;
    const whole = wholeBrotli(ctx);
    const keep = whole ? null : sink;
    let encoding = ctx.encoding;
    if (encoding !== null && middleEnd + 256 < COMPRESS_MIN_BYTES) encoding = null;
    // What is encoded and kept starts at the middle, or at 0 when the whole body is compressed (then nothing is kept).
    const split = whole ? 0 : middleAt;
    let body: Uint8Array;
    if (encoding === null) {
      // Identity: the suffix goes right after the middle, and the body is `out` itself: no
      // copy of the whole answer into a second buffer, and one view (the cache copies the
      // middle out of it).
      writer.writeSuffix(out, meta, stamp);
      body = out.view();
      keep?.keep(ctx, body, split, middleEnd);
    } else {
      const bytes = out.view();
      if (bytes.byteLength > ASYNC_COMPRESS_BYTES) return this.later(ctx, bytes, split, encoding, keep);
      // No prefix (JSON, CSV): no view made.
      const head = encodeHead(split === 0 ? bytes : bytes.subarray(split), encoding);
      keep?.keep(ctx, head, 0, head.bytes.byteLength);
      const tail = this.suffix(ctx, meta);
      body = this.bufs.bodies.encoded(head, split === 0 ? EMPTY : bytes.subarray(0, split), tail);
    }
    return ctx.answered(200, this.headers.answer(meta, ctx.req, ctx.key, encoding, ctx.immutable), body, meta.count);
  }

  /** The suffix of `ctx`'s writer for `meta` and the context's stamp, in the thread's suffix buffer. */
  private suffix(ctx: Pick<AnswerContext, 'writer' | 'stamp'>, meta: PageMeta): Uint8Array {
    const tail = this.bufs.tail;
    tail.reset();
    ctx.writer.writeSuffix(tail, meta, ctx.stamp);
    return tail.view();
  }

  /**
   * A large body compressed on the thread pool (ASYNC_COMPRESS_BYTES): what the answer
   * needs after the await is owned (ownership.ts), since other requests refill the
   * thread's scratch and the transport's request object meanwhile.
   */
  private later(ctx: AnswerContext, bytes: Uint8Array, split: number, encoding: Encoding, keep: KeepSink | null): Promise<DataAnswer> {
    const owned = Buffer.from(bytes);
    const own = ownAcrossAwait({ req: ctx.req, recordId: ctx.recordId, key: ctx.key, stamp: ctx.stamp, meta: ctx.meta });
    const key = own.key!;
    const meta = own.meta!;
    const fresh: FreshAnswer = { meta, shape: ctx.shape };
    const { writer, format, immutable } = ctx;
    return encodeHeadAsync(owned.subarray(split), encoding).then((encoded) => {
      keep?.keepLater(key, fresh, encoded);
      const tail = this.suffix({ writer, stamp: own.stamp! }, meta);
      const body = Buffer.from(this.bufs.bodies.encoded(encoded, owned.subarray(0, split), tail));
      const headerBlock = ownedBlock(this.headers.answer(meta, own.req, key, encoding, immutable));
      return { status: 200, headerBlock, contentType: writer.contentType, body, rows: meta.count, format };
    });
  }
}

/**
 * A prefix cannot go in front of a cached brotli middle (encoded-body.ts: the stream header
 * is bit-packed into the first meta-block, and bytes in front would turn its
 * static-dictionary references into copies of the prefix): such answers are written and
 * compressed whole, per request, and never cached.
 */
export function wholeBrotli(ctx: AnswerContext): boolean {
  return ctx.writer.prefixed && ctx.encoding === 'br';
}
