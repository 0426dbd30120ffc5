import { LRUCache } from 'lru-cache';
import type { EncodedHead } from '../format/encoded-body.js';
import { Doorkeeper } from './doorkeeper.js';
import type { PageMeta } from './page-writers.js';

interface Entry {
  /** the bytes that depend only on (generation, request): identity, or encoded once */
  readonly head: Uint8Array | EncodedHead;
  readonly meta: PageMeta;
}

/**
 * Bodies of repeated queries, byte-bounded LRU. The key names the dataset, the generation
 * and the normalised request (canonical query, format, columns, encoding, cursor), so an
 * entry can never outlive or cross a generation or serve another format or coding. A body
 * is admitted on its query's second request (Doorkeeper): a sweep of distinct queries does
 * not allocate and evict a body per request. Hits, misses and evictions are counted.
 */
export class ResponseCache {
  private readonly lru: LRUCache<string, Entry>;
  private readonly doorkeeper: Doorkeeper;
  hits = 0;
  misses = 0;
  evictions = 0;

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

  /** Keeps the entry if its key was asked for before (a fresh view of `out` is copied: the caller reuses its buffer). */
  admit(key: string, head: Uint8Array | EncodedHead, meta: PageMeta): void {
    if (!this.doorkeeper.admit(key)) return;
    this.set(key, head instanceof Uint8Array ? Buffer.from(head) : head, meta);
  }

  /** Keeps an owned entry unconditionally (an encoding computed off-thread is worth keeping). */
  set(key: string, head: Uint8Array | EncodedHead, meta: PageMeta): void {
    this.lru.set(key, { head, meta });
  }
}
