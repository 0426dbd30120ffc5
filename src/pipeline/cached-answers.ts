import type { RequestKey } from '../cache/request-key.js';
import type { CachedHead, FreshAnswer, ResponseCache, ResponseCacheStats } from '../cache/response-cache.js';
import type { EncodedHead } from '../format/encoded-body.js';
import type { FormatWriter } from '../format/format-writer.js';
import type { Format } from '../format/negotiate.js';
import { ageIsFixed } from '../format/resolved-page.js';
import type { HeaderBlock } from '../http/header-block.js';
import type { Clock } from '../time/clock.js';
import { EMPTY, type AnswerContext } from './answer-context.js';
import type { AnswerHeaders } from './answer-headers.js';
import type { DataAnswer } from './data-answer.js';
import type { Owned } from './ownership.js';
import { wholeBrotli, type AnswerBuffers, type AnswerStage, type KeepSink, type WriteStage } from './write-stage.js';

/**
 * The response cache around the write stage, as an interceptor: it owns its lookup (a
 * request answered from a kept middle with this request's prefix and suffix around it, or
 * from the very text it was last answered for) and its store (it is the write stage's sink,
 * so it hears of every fresh middle and decides what to keep). The stages before it know
 * nothing of it.
 */
export class CachedAnswers implements AnswerStage, KeepSink {
  constructor(
    private readonly cache: ResponseCache,
    private readonly inner: WriteStage,
    private readonly bufs: AnswerBuffers,
    private readonly headers: AnswerHeaders,
    private readonly env: { readonly clock: Clock; readonly writers: Readonly<Record<Format, FormatWriter>> },
  ) {}

  stats(): ResponseCacheStats {
    return this.cache.stats();
  }

  answer(ctx: AnswerContext): DataAnswer | Promise<DataAnswer> {
    if (wholeBrotli(ctx)) return this.inner.write(ctx, null);
    const hit = this.cache.get(ctx.key);
    if (hit === undefined) return this.inner.write(ctx, this);
    const { req, writer, stamp } = ctx;
    // Where nothing in the suffix but the stamp moves, the one the entry's last hit left in the arena is restamped.
    const again = ageIsFixed(hit.meta) ? this.cache.restampedBody(hit, writer, stamp) : null;
    const headerBlock = this.hitHeaders(hit, ctx);
    // Answered whole from the entry: the next request of this very text needs no parsing (recall).
    if (again !== null && hit.headers !== null) this.cache.remember(hit, req.path, req.rawQuery, req.accept, req.acceptEncoding);
    return ctx.answered(200, headerBlock, again ?? this.hitBody(hit, ctx), hit.meta.count);
  }

  /**
   * A request of exactly the text (path, query, Accept, Accept-Encoding) that an entry was
   * last answered whole for, while the dataset's current generation is still the entry's:
   * answered from the entry without parsing, negotiating or normalising it again. Such an
   * entry keeps its headers and restamps its suffix, so its answer depends on nothing else.
   * A request with If-None-Match, or one the entry's writer cannot restamp, goes the whole way.
   */
  recall(ctx: AnswerContext): DataAnswer | null {
    const { req } = ctx;
    const gen = ctx.slot.current;
    if (req.ifNoneMatch !== '' || gen === null) return null;
    const hit = this.cache.recall(req, gen.number, ctx.slot.keyText);
    if (hit === undefined) return null;
    const format = hit.key.format as Format;
    const writer = this.env.writers[format];
    ctx.stamp.retrievedAtUs = this.env.clock.now() * 1000;
    ctx.stamp.recordId = ctx.recordId;
    const body = this.cache.restampedBody(hit, writer, ctx.stamp);
    if (body === null) return null;
    this.cache.counted(hit);
    ctx.format = format;
    ctx.writer = writer;
    return ctx.answered(200, hit.headers!, body, hit.meta.count);
  }

  keep(ctx: AnswerContext, bytes: Uint8Array | EncodedHead, start: number, end: number): void {
    this.cache.admit(ctx.key, ctx, bytes, start, end);
  }

  keepLater(key: Owned<RequestKey>, fresh: FreshAnswer, head: EncodedHead): void {
    this.cache.set(key, fresh, head);
  }

  /**
   * A hit's headers: those its entry keeps, or written and, when they depend on nothing but
   * the entry, kept with it for the next hits. ETag, content-encoding and cache-control
   * follow from the key the entry matched (as_of and generation are in its canonical text);
   * what else could differ between two hits is the age without an as_of (it moves with the
   * clock) and the Link of a page with a next one (it repeats the request's own query, whose
   * parameters may come in another order).
   */
  private hitHeaders(hit: CachedHead, ctx: AnswerContext): HeaderBlock {
    if (hit.headers !== null) return hit.headers;
    const block = this.headers.answer(hit.meta, ctx.req, ctx.key, hit.encoding, ctx.immutable);
    if (hit.meta.nextCursor === null && ageIsFixed(hit.meta)) this.cache.keepHeaders(hit, block);
    return block;
  }

  /** A hit's body put together: its prefix and suffix written for this request around the kept middle. */
  private hitBody(hit: CachedHead, ctx: AnswerContext): Uint8Array {
    const { out, tail, bodies } = this.bufs;
    out.reset();
    ctx.writer.writePrefix(out, hit.meta, hit.shape, ctx.stamp);
    tail.reset();
    ctx.writer.writeSuffix(tail, hit.meta, ctx.stamp);
    return bodies.hit(this.cache, hit, out.pos === 0 ? EMPTY : out.view(), tail.view());
  }
}
