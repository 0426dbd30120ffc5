import { inspect } from 'node:util';
import { LRUCache } from 'lru-cache';
import { sha256Hex } from './keys-file.js';
import type { KeysConfig, RateLimit } from './keys-file.js';

/** Presented strings longer than this are hashed every time, never cached (bounds cache memory). */
const MAX_CACHED_KEY_LENGTH = 256;
const DEFAULT_CACHE_SIZE = 4096;

/** '*': every product, those a later catalog adds included (contract 13). */
const ALL_PRODUCTS = null;

/**
 * The keys of a keys file, answering "who is this?" once per request with a dense index,
 * then "may they?" by index. A reloaded keys file is swapped in whole with `replace`
 * (between requests: a serving thread applies it from its message loop), so every holder
 * of the registry (the handler, the routes, the rate limiter) sees the new keys at once.
 *
 * Secrets live in private fields only and inspect/toString/JSON print a count, so neither a
 * log line nor a debugger dump of the registry shows a key or a presented string.
 */
export class KeyRegistry {
  #size: number;
  #byHash: Map<string, number>;
  #ids: readonly string[];
  #admin: Uint8Array;
  /** per key: the product ids it may read, or null for every product */
  #entitlements: ReadonlyArray<ReadonlySet<string> | null>;
  #rateLimits: ReadonlyArray<RateLimit | null>;
  #byId: Map<string, number>;
  /**
   * Presented string -> index (or -1), so a steady stream of requests skips the SHA-256. Misses
   * are cached too (a client retrying a bad key costs nothing); the LRU bound caps what a flood
   * of random keys can take, and it can only evict entries, never change an answer: `replace`
   * brings a new cache with the new keys.
   */
  #cache: LRUCache<string, number> | null;
  /**
   * lru-cache's get defaults its options to a fresh `{}` per call: one kept object saves that
   * per request (docs/decisions.md#allocation). get writes `status` into it, which stays undefined unless a
   * diagnostics_channel subscriber listens to lru-cache (none does in pitcache).
   */
  readonly #getOptions: LRUCache.GetOptions<string, number, unknown> = {};

  constructor(cfg: KeysConfig, options: { cacheSize?: number } = {}) {
    const n = cfg.keys.length;
    this.#size = n;
    this.#byHash = new Map();
    this.#byId = new Map();
    this.#admin = new Uint8Array(n);
    const entitlements: Array<ReadonlySet<string> | null> = [];
    const ids: string[] = [];
    const limits: Array<RateLimit | null> = [];
    cfg.keys.forEach((k, i) => {
      // parseKeysFile already refuses duplicates; re-checked because a config may be built by hand.
      if (this.#byHash.has(k.sha256) || this.#byId.has(k.id)) throw new Error(`keys[${i}] (id "${k.id}"): duplicate id or key`);
      this.#byHash.set(k.sha256, i);
      this.#byId.set(k.id, i);
      ids.push(k.id);
      limits.push(k.rateLimit);
      this.#admin[i] = k.admin ? 1 : 0;
      // Product ids are kept as given: one the catalog lacks may come with a later catalog (contract 13).
      entitlements.push(k.products === '*' ? ALL_PRODUCTS : new Set(k.products));
    });
    this.#ids = ids;
    this.#entitlements = entitlements;
    this.#rateLimits = limits;
    const cacheSize = options.cacheSize ?? DEFAULT_CACHE_SIZE;
    this.#cache = cacheSize > 0 ? new LRUCache<string, number>({ max: cacheSize }) : null;
  }

  get size(): number {
    return this.#size;
  }

  /** Takes the keys of `next` (a reloaded keys file); indices are `next`'s from now on. */
  replace(next: KeyRegistry): void {
    this.#size = next.#size;
    this.#byHash = next.#byHash;
    this.#ids = next.#ids;
    this.#admin = next.#admin;
    this.#entitlements = next.#entitlements;
    this.#rateLimits = next.#rateLimits;
    this.#byId = next.#byId;
    this.#cache = next.#cache;
  }

  /**
   * The dense index of the key presented in `x-api-key`, or -1 when it is missing or unknown
   * (one answer for both: contract 5 gives them one message).
   */
  authenticate(presented: string | null | undefined): number {
    if (presented === null || presented === undefined || presented === '') return -1;
    const cache = this.#cache;
    if (cache === null || presented.length > MAX_CACHED_KEY_LENGTH) return this.#lookup(presented);
    const hit = cache.get(presented, this.#getOptions);
    if (hit !== undefined) return hit;
    const index = this.#lookup(presented);
    cache.set(presented, index);
    return index;
  }

  #lookup(presented: string): number {
    // Comparing hashes, not keys: a timing difference in the Map lookup says nothing about the key.
    return this.#byHash.get(sha256Hex(presented)) ?? -1;
  }

  id(index: number): string {
    const id = this.#ids[index];
    if (id === undefined) throw new RangeError(`no key at index ${index}`);
    return id;
  }

  /** The index of a key by its id (for operational endpoints and tests), or -1. */
  indexOfId(id: string): number {
    return this.#byId.get(id) ?? -1;
  }

  isAdmin(index: number): boolean {
    return this.#admin[index] === 1;
  }

  /** False for an unknown product as well: the caller answers 404 for those before asking. */
  entitled(index: number, productId: string): boolean {
    const e = this.#entitlements[index];
    return e === null || (e !== undefined && e.has(productId));
  }

  /** The key's token bucket, or null when it is unlimited. */
  rateLimit(index: number): RateLimit | null {
    return this.#rateLimits[index] ?? null;
  }

  toString(): string {
    return `KeyRegistry(${this.size} keys)`;
  }

  toJSON(): { keys: number } {
    return { keys: this.size };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
