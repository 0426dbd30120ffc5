import { LRUCache } from 'lru-cache';
import type { EncodedHead, Encoding } from '../format/encoded-body.js';
import type { PageMeta } from '../format/resolved-page.js';
import { Doorkeeper } from './doorkeeper.js';
import { HeadArena } from './head-arena.js';

/**
 * A data request after normalisation: everything that decides the bytes of an answer's
 * cacheable middle (format-writer.ts). Two requests with equal parts get the same middle
 * (the per-request prefix and suffix, with retrieved_at, record_id, data_age_hours, are
 * written per request).
 */
export interface NormalisedRequest {
  /** `product/dataset` */
  readonly dataset: string;
  /** the generation answering: a key names one generation, so an entry never outlives or crosses one */
  readonly generation: number;
  /** the query's canonical form: every parameter but cursor, format and columns, normalised (parse-query.ts) */
  readonly canonical: string;
  /** the writer's format: `json`, `csv`, `arrow` */
  readonly format: string;
  /** the stored columns written: projectionKey (`*` for all) */
  readonly columns: string;
  /** the content coding of the middle; null for identity */
  readonly encoding: string | null;
  readonly cursor: string | null;
}

/**
 * The normalised request as text, without dataset and generation: what the weak ETag
 * hashes (with them, etag.ts) and the response cache's key ends with. Parts are joined by
 * U+0001, which none holds (a canonical query joins its own parts with U+0001 too, at
 * fixed positions; the parts after it come from fixed vocabularies or base64url).
 */
export function normalisedText(r: Omit<NormalisedRequest, 'dataset' | 'generation'>): string {
  return `${r.canonical}\u0001${r.format}\u0001${r.columns}\u0001${r.encoding ?? ''}\u0001${r.cursor ?? ''}`;
}

/**
 * The response cache's key: dataset, generation, then the normalised text. The canonical
 * text itself, not a hash, is in the key, so two requests never share an entry.
 */
export function responseKey(dataset: string, generation: number, normalised: string): string {
  return `${dataset}\u0001${generation}\u0001${normalised}`;
}

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
  readonly meta: PageMeta;
  /** the writer's shapeOf(view) (FormatWriter): owned, no table data */
  readonly shape: unknown;
}

/** An identity head, or an encoded one with what its prefix and suffix need (as in EncodedHead: CRC-32 and length of the decoded middle). */
export type CachedHead = (KeptHead & { readonly encoding: null }) | (KeptHead & { readonly encoding: Encoding; readonly crc: number; readonly length: number });

export interface ResponseCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** heads kept (their key was asked for before: the doorkeeper admitted them) */
  readonly stores: number;
  /** heads dropped to stay within the byte bound */
  readonly evictions: number;
  /** heads not kept because one alone exceeds the bound */
  readonly tooLarge: number;
  /** heads not kept because their key was not asked for before (the doorkeeper) */
  readonly declined: number;
  readonly entries: number;
}

/**
 * Heads of repeated answers, byte-bounded LRU, keyed by responseKey, so an entry can never
 * outlive or cross a generation or serve another format, projection or coding. A head is
 * admitted on its request's second ask (Doorkeeper): a sweep of distinct queries does not
 * allocate and evict a body per request. One per serving thread, in front of the data
 * endpoints; a hit skips resolve and writing, only the tail is written.
 */
export class ResponseCache {
  private readonly lru: LRUCache<string, CachedHead>;
  private readonly arena: HeadArena;
  private readonly doorkeeper: Doorkeeper;
  private hits = 0;
  private misses = 0;
  private stores = 0;
  private evictions = 0;
  private tooLarge = 0;
  private declined = 0;

  constructor(private readonly maxBytes: number) {
    this.arena = new HeadArena(maxBytes);
    this.lru = new LRUCache<string, CachedHead>({
      maxSize: maxBytes,
      sizeCalculation: (v, k) => v.bytes + 2 * k.length + 256,
      // Every way out of the cache (evicted, replaced, deleted) gives its pages back.
      dispose: (v, _k, reason) => {
        this.arena.release(v.first);
        if (reason === 'evict') this.evictions++;
      },
    });
    // About four times the bodies of a typical answer (33 KB) the cache can hold.
    this.doorkeeper = new Doorkeeper(Math.ceil(maxBytes / 8192));
  }

  get(key: string): CachedHead | undefined {
    const e = this.lru.get(key);
    if (e === undefined) this.misses++;
    else this.hits++;
    return e;
  }

  /** Keeps the entry if its key was asked for before (its bytes are copied: `head` may be a reused view). */
  admit(key: string, head: Uint8Array | EncodedHead, meta: PageMeta, shape: unknown): void {
    if (!this.doorkeeper.admit(key)) {
      this.declined++;
      return;
    }
    this.set(key, head, meta, shape);
  }

  /** Keeps a copy of the entry unconditionally (an encoding computed off-thread is worth keeping). */
  set(key: string, head: Uint8Array | EncodedHead, meta: PageMeta, shape: unknown): void {
    const src = head instanceof Uint8Array ? head : head.bytes;
    if (src.byteLength + 2 * key.length + 256 > this.maxBytes) {
      this.tooLarge++;
      return;
    }
    // Whole pages may hold more than the bytes the bound counts: make room in least-recently-used order.
    const need = HeadArena.pagesFor(src.byteLength);
    while (this.arena.freePages < need && this.lru.size > 0) this.lru.pop();
    const first = this.arena.store(src);
    const entry: CachedHead =
      head instanceof Uint8Array
        ? { first, bytes: src.byteLength, meta, shape, encoding: null }
        : { first, bytes: src.byteLength, meta, shape, encoding: head.encoding, crc: head.crc, length: head.length };
    this.lru.set(key, entry);
    this.stores++;
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
      entries: this.lru.size,
    };
  }
}
