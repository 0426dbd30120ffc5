import { LRUCache } from 'lru-cache';
import type { EncodedHead } from '../format/encoded-body.js';
import type { PageMeta } from '../format/resolved-page.js';
import { Doorkeeper } from './doorkeeper.js';

/**
 * A data request after normalisation: everything that decides the bytes of an answer's
 * head. Two requests with equal parts get the same head (the per-request tail,
 * retrieved_at, record_id, data_age_hours, is written per request).
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
  /** the content coding of the head; null for identity */
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

interface Entry {
  /** the bytes that depend only on (generation, request): identity, or encoded once */
  readonly head: Uint8Array | EncodedHead;
  readonly meta: PageMeta;
}

export interface ResponseCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** heads kept (their key was asked for before: the doorkeeper admitted them) */
  readonly stores: number;
  /** heads dropped to stay within the byte bound */
  readonly evictions: number;
  /** heads not kept because one alone exceeds the bound */
  readonly tooLarge: number;
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
  private readonly lru: LRUCache<string, Entry>;
  private readonly doorkeeper: Doorkeeper;
  private hits = 0;
  private misses = 0;
  private stores = 0;
  private evictions = 0;
  private tooLarge = 0;

  constructor(maxBytes: number) {
    this.lru = new LRUCache<string, Entry>({
      maxSize: maxBytes,
      sizeCalculation: (v, k) => (v.head instanceof Uint8Array ? v.head.byteLength : v.head.bytes.byteLength) + 2 * k.length + 256,
      dispose: (_v, _k, reason) => {
        if (reason === 'evict') this.evictions++;
      },
    });
    // About four times the bodies of a typical answer (33 KB) the cache can hold.
    this.doorkeeper = new Doorkeeper(Math.ceil(maxBytes / 8192));
  }

  get(key: string): Entry | undefined {
    const e = this.lru.get(key);
    if (e === undefined) this.misses++;
    else this.hits++;
    return e;
  }

  /** Keeps the entry if its key was asked for before (a view of a reused buffer is copied). */
  admit(key: string, head: Uint8Array | EncodedHead, meta: PageMeta): void {
    if (!this.doorkeeper.admit(key)) return;
    this.set(key, head instanceof Uint8Array ? Buffer.from(head) : head, meta);
  }

  /** Keeps an owned entry unconditionally (an encoding computed off-thread is worth keeping). */
  set(key: string, head: Uint8Array | EncodedHead, meta: PageMeta): void {
    this.lru.set(key, { head, meta });
    if (this.lru.has(key)) this.stores++;
    else this.tooLarge++;
  }

  stats(): ResponseCacheStats {
    return { hits: this.hits, misses: this.misses, stores: this.stores, evictions: this.evictions, tooLarge: this.tooLarge, entries: this.lru.size };
  }
}
