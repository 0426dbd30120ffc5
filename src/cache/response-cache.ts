import type { EncodedHead, Encoding } from '../format/encoded-body.js';
import type { HttpRequest } from '../http/types.js';
import type { FormatWriter } from '../format/format-writer.js';
import { ownedMeta, type PageMeta, type RequestStamp } from '../format/resolved-page.js';
import { ownedBlock, type HeaderBlock } from '../http/header-block.js';
import { AskIndex, type RawAsk } from './ask-index.js';
import { HEAD_PAGE_BYTES, HeadArena } from './head-arena.js';
import type { RequestKey } from './request-key.js';
import { ResponseAdmission } from './response-admission.js';
import { SlotLru } from './slot-lru.js';

/** What a request says before it is parsed, all of which names a recalled answer (ask-index.ts). */
export type RequestText = Pick<HttpRequest, 'path' | 'rawQuery' | 'accept' | 'acceptEncoding'>;

/**
 * A kept head, an answer's cacheable middle: its bytes live in the cache's HeadArena (a
 * chain of pages from `first`), the rest is what a hit needs to finish the answer without
 * resolving or encoding: the page's meta and its writer's shape (for the prefix).
 */
interface KeptHead {
  /** first page of the chain in the arena (-1 for an empty head) */
  readonly first: number;
  /** bytes stored: the middle itself, or its encoded bytes */
  readonly bytes: number;
  /** an identity head kept in one run of pages: where it starts in the arena's bytes (bodyWith); else -1 */
  readonly at: number;
  /** the bytes its last page holds past the head (the page is its own): the most a suffix written there may take */
  readonly room: number;
  readonly meta: PageMeta;
  /** the writer's shapeOf(view) (FormatWriter): owned, no table data */
  readonly shape: unknown;
  /** the request it answers (its own copy), told apart from another whose key collides with it (RequestKey.matches) */
  readonly key: RequestKey;
  /** the answer's headers when they depend on nothing but the entry, kept at its first hit (keepHeaders); else null */
  headers: HeaderBlock | null;
  /** bytes of the suffix bodyWith last wrote after the head (restampedBody); -1 before the first */
  suffix: number;
  /** the request text it was last answered for whole from the cache (remember); null before */
  ask: RawAsk | null;
}

/** An identity head, or an encoded one with what its prefix and suffix need (as in EncodedHead: CRC-32 and length of the decoded middle). */
export type CachedHead = (KeptHead & { readonly encoding: null }) | (KeptHead & { readonly encoding: Encoding; readonly crc: number; readonly length: number });

/** What an entry counts against the bound: its bytes, its key's text (UTF-16) and about what its LRU node, entry and meta take. */
function entrySize(bytes: number, key: RequestKey): number {
  return bytes + 2 * key.length + 256;
}

/** The bytes a head keeps: the identity middle's, or its encoded bytes'. */
function byteLengthOf(head: Uint8Array | EncodedHead): number {
  return head instanceof Uint8Array ? head.byteLength : head.bytes.byteLength;
}

/** What a freshly written answer is besides its bytes: its envelope's figures (the thread's scratch, copied when kept) and its writer's shape. */
export interface FreshAnswer {
  readonly meta: PageMeta;
  readonly shape: unknown;
}

export interface ResponseCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** heads kept (admit: asked for before, and room or a win over the victim; set: always) */
  readonly stores: number;
  /** heads dropped to stay within the byte bound */
  readonly evictions: number;
  /** heads not kept because one alone exceeds the bound */
  readonly tooLarge: number;
  /** heads not kept because their key was not asked for lately (the sketch had not counted it) */
  readonly declined: number;
  /** heads not kept because the cache was full and the entry they would evict first was asked for as often or more (the frequency sketch) */
  readonly rejected: number;
  readonly entries: number;
  /** entries filed under the text of a request they answered whole: found again without parsing (recall) */
  readonly remembered: number;
}

/**
 * Heads of repeated answers, byte-bounded LRU, filed under RequestKey.slot and served only
 * to the very request they answer (RequestKey.matches: dataset, generation and every part
 * of the normalised request), so an entry can never outlive or cross a generation or serve
 * another format, projection or coding. Keys that collide take each other's place. One per
 * serving thread, in front of the data endpoints; a hit skips resolve and writing, only the
 * tail is written.
 *
 * Which answers are kept is ResponseAdmission's (TinyLFU): from a query's second ask lately,
 * and once the cache is full, only over an entry asked for less often lately or of an older
 * generation of its dataset.
 */
export class ResponseCache {
  private readonly lru: SlotLru<CachedHead>;
  private readonly arena: HeadArena;
  private readonly admission: ResponseAdmission;
  private readonly asks = new AskIndex<CachedHead>();
  private hits = 0;
  private misses = 0;
  private stores = 0;
  private evictions = 0;
  private tooLarge = 0;
  private declined = 0;
  private rejected = 0;
  constructor(private readonly maxBytes: number) {
    this.arena = new HeadArena(maxBytes);
    this.lru = new SlotLru<CachedHead>(
      maxBytes,
      (v) => entrySize(v.bytes, v.key),
      // Every way out of the cache (evicted or replaced) gives its pages back.
      (v, _slot, reason) => {
        this.arena.release(v.first);
        this.asks.forget(v);
        if (reason === 'evict') this.evictions++;
      },
    );
    this.admission = new ResponseAdmission(maxBytes);
  }

  /**
   * The entry a request of exactly this text was last answered from whole (remember), when it
   * is of `generation` and `dataset` (DatasetSlot.keyText): the caller has not parsed the request, so the generation it would pin
   * is checked here. Not counted: `counted` counts it once the answer is made.
   */
  recall(ask: RequestText, generation: number, dataset: string): CachedHead | undefined {
    const e = this.asks.recall(ask.path, ask.rawQuery, ask.accept, ask.acceptEncoding);
    // The dataset's key text changes with its floor and filters (dataset-slot.ts): an answer under others is not this one.
    return e !== undefined && e.key.generation === generation && e.key.dataset === dataset ? e : undefined;
  }

  /** A recalled entry answered a request: counted as get() counts a hit, and made the most recently used. */
  counted(entry: CachedHead): void {
    this.lru.get(entry.key.slot);
    this.hits++;
    this.admission.asked(entry.key.slot);
  }

  /**
   * Files `entry` under the text of a request it answered whole: headers kept and suffix
   * restamped, so that nothing in its answers depends on more than the entry, the stamp and
   * that text (recall).
   */
  remember(entry: CachedHead, path: string, query: string, accept: string, acceptEncoding: string): void {
    this.asks.remember(entry, path, query, accept, acceptEncoding);
  }

  /** The head kept for this very request, or undefined (a miss: admit what is rendered then). */
  get(key: RequestKey): CachedHead | undefined {
    const e = this.lru.get(key.slot);
    if (e === undefined || !key.matches(e.key)) {
      this.misses++;
      return undefined;
    }
    this.hits++;
    this.admission.asked(key.slot);
    return e;
  }

  /**
   * Keeps the entry if its key was asked for before and, when the cache is full, more often
   * than the entry it would evict first. What is kept is copied (`head` may be a reused
   * view, `meta` the thread's scratch). An identity head is `head[start..end)`: the middle
   * of a body written with its suffix, with no view cut for it.
   */
  admit(key: RequestKey, fresh: FreshAnswer, head: Uint8Array | EncodedHead, start = 0, end = byteLengthOf(head)): void {
    if (this.admission.asked(key.slot) === 0) {
      this.declined++;
      return;
    }
    const bytes = end - start;
    if (this.tooLargeFor(key, bytes)) return;
    if (!this.hasRoomFor(key, bytes)) {
      const victim = this.lru.peekOldest();
      if (victim !== undefined && !this.admission.replaces(key, victim)) {
        this.rejected++;
        return;
      }
    }
    this.store(key, fresh, head, start, end);
  }

  /** Keeps a copy of the entry unconditionally (an encoding computed off-thread is worth keeping). */
  set(key: RequestKey, fresh: FreshAnswer, head: Uint8Array | EncodedHead): void {
    const end = byteLengthOf(head);
    if (this.tooLargeFor(key, end)) return;
    this.store(key, fresh, head, 0, end);
  }

  /** True (and counted) when a head of `bytes` alone exceeds the bound: it is never kept. */
  private tooLargeFor(key: RequestKey, bytes: number): boolean {
    if (entrySize(bytes, key) <= this.maxBytes) return false;
    this.tooLarge++;
    return true;
  }

  /** True when a head of `bytes` fits without evicting anything, by the bound and by the arena's pages. */
  private hasRoomFor(key: RequestKey, bytes: number): boolean {
    return this.lru.calculatedSize + entrySize(bytes, key) <= this.maxBytes && this.arena.freePages >= HeadArena.pagesFor(bytes);
  }

  private store(key: RequestKey, fresh: FreshAnswer, head: Uint8Array | EncodedHead, start: number, end: number): void {
    const { meta, shape } = fresh;
    const identity = head instanceof Uint8Array;
    const src = identity ? head : head.bytes;
    const bytes = end - start;
    // Whole pages may hold more than the bytes the bound counts: make room in least-recently-used order.
    const need = HeadArena.pagesFor(bytes);
    while (this.arena.freePages < need && this.lru.size > 0) this.lru.pop();
    const first = this.arena.store(src, start, end);
    // The spare end of its last page is where a hit writes its suffix (bodyWith): nothing else uses it.
    const at = identity ? this.arena.runOffset(first, need) : -1;
    const room = need * HEAD_PAGE_BYTES - bytes;
    const kept = key.copy();
    const owned = ownedMeta(meta);
    const entry: CachedHead = identity
      ? { first, bytes, at, room, meta: owned, shape, key: kept, headers: null, suffix: -1, ask: null, encoding: null }
      : {
          first,
          bytes,
          at,
          room,
          meta: owned,
          shape,
          key: kept,
          headers: null,
          suffix: -1,
          ask: null,
          encoding: head.encoding,
          crc: head.crc,
          length: head.length,
        };
    // Under the slot of a colliding request, this one takes its place (set disposes of it).
    this.lru.set(kept.slot, entry);
    this.stores++;
  }

  /**
   * A hit's body without copying its head: `suffix` written into the spare end of the last
   * page of an identity head kept in one run of pages, and one view of the head and suffix
   * together. Null when the head is encoded or in a chain of scattered pages, or the suffix
   * outgrows the spare end (JSON's metadata takes 200-400 bytes, so about one 35 KB answer
   * in ten): then copyHead puts the body together. The view is valid until the entry's next
   * hit writes its own suffix there, or its pages go to another head (the transport sends a
   * synchronous answer before it takes the next request).
   */
  bodyWith(entry: CachedHead, suffix: Uint8Array): Uint8Array | null {
    if (entry.at < 0 || suffix.byteLength > entry.room) return null;
    const end = entry.at + entry.bytes;
    const bytes = this.arena.bytes;
    bytes.set(suffix, end);
    entry.suffix = suffix.byteLength;
    return bytes.subarray(entry.at, end + suffix.byteLength);
  }

  /**
   * A hit's body as bodyWith left it at the entry's last hit, with that suffix restamped in
   * place for this request by the writer that wrote it (FormatWriter.restampSuffix: the
   * entry's key names its format); null before the entry's first such hit, or when the
   * writer declines. The caller vouches that nothing else in the suffix moves between hits.
   */
  restampedBody(entry: CachedHead, writer: FormatWriter, stamp: RequestStamp): Uint8Array | null {
    if (entry.suffix < 0) return null;
    const end = entry.at + entry.bytes;
    const bytes = this.arena.bytes;
    if (!writer.restampSuffix(bytes, end, end + entry.suffix, entry.meta, stamp)) return null;
    return bytes.subarray(entry.at, end + entry.suffix);
  }

  /**
   * Keeps a copy of `block` as the headers of every later hit of `entry`. The caller vouches
   * that they depend on nothing but the entry: not on the time, nor on the request's own
   * text beyond its key.
   */
  keepHeaders(entry: CachedHead, block: HeaderBlock): void {
    entry.headers = ownedBlock(block);
  }

  /** Copies a kept head's stored bytes into dst at `to` (dst has room for `entry.bytes` there). */
  copyHead(entry: CachedHead, dst: Uint8Array, to = 0): void {
    this.arena.copyOut(entry.first, entry.bytes, dst, to);
  }

  stats(): ResponseCacheStats {
    return {
      hits: this.hits,
      misses: this.misses,
      stores: this.stores,
      evictions: this.evictions,
      tooLarge: this.tooLarge,
      declined: this.declined,
      rejected: this.rejected,
      entries: this.lru.size,
      remembered: this.asks.size,
    };
  }
}
