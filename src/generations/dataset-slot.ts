import { floorUsOf, type ProductSpec } from '../catalog/catalog.js';
import type { Generation } from './generation.js';

export type SlotState = 'pending' | 'loaded' | 'missing' | 'refused' | 'unreachable';

/** What a serving thread mirrors of a slot the loading thread owns (serving-messages.ts). */
export interface SlotStatus {
  readonly state: SlotState;
  readonly lastError: string | null;
  readonly lastCheckMs: number | null;
}

/**
 * One named dataset: its serving generation, and the superseded ones kept so that a cursor
 * chain started on them can finish (or loaded again from history/ for a cursor or a
 * `generation=N`). Swapping is one assignment: a request reads `current` once and uses
 * that generation to the end. Which superseded generations stay is not decided here: the
 * process-wide memory budget (retained-generations.ts) releases them, on every thread.
 *
 * The slot owns its state: every transition is a method here, and the fields are read-only
 * outside (the loader decides *when*, the slot decides *what changes*).
 */
export class DatasetSlot {
  readonly id: string;
  private _product: ProductSpec;
  private _floorUs: number;
  private _keyText: string;
  private _state: SlotState = 'pending';
  private _current: Generation | null = null;
  private _lastError: string | null = null;
  private _lastCheckMs: number | null = null;
  private readonly retained = new Map<number, Generation>();

  constructor(
    product: ProductSpec,
    readonly dataset: string,
  ) {
    this.id = `${product.id}/${dataset}`;
    this._product = product;
    this._floorUs = floorUsOf(product.floor);
    this._keyText = keyTextOf(this.id, product);
  }

  /** The product as the catalog in force says (name, filters, floor): read per request, so a change applies from the next one. */
  get product(): ProductSpec {
    return this._product;
  }
  /** End of the floor day, µs (-Infinity: no floor); the live tables' thresholds were computed with it. */
  get floorUs(): number {
    return this._floorUs;
  }
  /** What a request's cache key and ETag name the dataset by: its id and its floor and filters (keyTextOf). */
  get keyText(): string {
    return this._keyText;
  }

  /**
   * The catalog in force changed this dataset's product (contract 13). A new floor comes
   * with the live generation re-floored (`refloored`, same number), and the superseded ones
   * go (they load again from history/ under the new floor); null when nothing is loaded.
   */
  respec(product: ProductSpec, refloored: Generation | null): Generation[] {
    const floorChanged = product.floor !== this._product.floor;
    this._product = product;
    this._floorUs = floorUsOf(product.floor);
    this._keyText = keyTextOf(this.id, product);
    if (!floorChanged) return [];
    // The live one's columns live on in its re-floored copy: only the superseded ones are let go.
    const gone = [...this.retained.values()];
    this.retained.clear();
    if (refloored !== null) this._current = refloored;
    return gone;
  }

  /**
   * The live generation can no longer be served (a filter of the new catalog is not in its
   * series key): nothing is, until a snapshot that fits. Returns what it let go (for the
   * thread's reaper, docs/snapshots.md#release).
   */
  unload(reason: string): Generation[] {
    const gone = this.held();
    this._current = null;
    this.retained.clear();
    this._state = 'refused';
    this._lastError = reason;
    return gone;
  }

  /**
   * The catalog in force no longer names this dataset: every reference goes, so the memory
   * can once requests in flight end. Returns what it let go (for the thread's reaper).
   */
  retire(): Generation[] {
    const gone = this.held();
    this._current = null;
    this.retained.clear();
    return gone;
  }

  /** The live generation and the retained ones. */
  private held(): Generation[] {
    return [...(this._current === null ? [] : [this._current]), ...this.retained.values()];
  }

  get state(): SlotState {
    return this._state;
  }
  get current(): Generation | null {
    return this._current;
  }
  /** why the last load or check failed; null after a success */
  get lastError(): string | null {
    return this._lastError;
  }
  get lastCheckMs(): number | null {
    return this._lastCheckMs;
  }

  /** Serves `next` from now on; the previous generation stays reachable for cursors until released. */
  swap(next: Generation): void {
    const prev = this._current;
    this._current = next;
    this._state = 'loaded';
    this._lastError = null;
    if (prev !== null && prev.number !== next.number && prev.table.floorUs === next.table.floorUs) this.retained.set(prev.number, prev);
    this.retained.delete(next.number);
  }

  /** A generation by number: the current one or a retained one, else null (cursor_expired). */
  find(number: number): Generation | null {
    if (this._current?.number === number) return this._current;
    return this.retained.get(number) ?? null;
  }

  /** A generation loaded again (from history/) for a cursor or `generation=N`: kept until released. */
  adopt(g: Generation): void {
    if (this._current?.number !== g.number && !this.retained.has(g.number)) this.retained.set(g.number, g);
  }

  /** The memory budget let a superseded generation go: its cursors now reload it from history/. Returns it (null when not held). */
  release(number: number): Generation | null {
    const g = this.retained.get(number) ?? null;
    this.retained.delete(number);
    return g;
  }

  /** Numbers of the superseded generations still kept for cursors. */
  retainedNumbers(): number[] {
    return [...this.retained.keys()].sort((a, b) => a - b);
  }

  /** A load failed: keep serving what we have (a bad snapshot never replaces a good one). */
  fail(state: 'missing' | 'refused' | 'unreachable', reason: string): void {
    this._lastError = reason;
    if (this._current === null) this._state = state;
  }

  /** A check of the source started at `ms`. */
  checked(ms: number): void {
    this._lastCheckMs = ms;
  }

  /** The source answers again: the last failure no longer applies. */
  recovered(): void {
    this._lastError = null;
  }

  /**
   * Serves a generation from the local cache while the source stays unreachable: it is
   * served, and the reason stays visible in /admin/status.
   */
  serveCached(g: Generation, reason: string): void {
    this.swap(g);
    this._lastError = reason;
  }

  /** What a serving thread mirrors of this slot. */
  status(): SlotStatus {
    return { state: this._state, lastError: this._lastError, lastCheckMs: this._lastCheckMs };
  }

  /** A serving thread takes the loading thread's view of the slot (the generation comes by `swap`). */
  mirror(s: SlotStatus): void {
    this._state = s.state;
    this._lastError = s.lastError;
    this._lastCheckMs = s.lastCheckMs;
  }
}

/**
 * `id` and a digest of what answers depend on besides the data (floor, filters): the same on
 * every thread and replica under the same catalog, another one once a change could alter
 * an answer (a cached answer, or a client's ETag, must not outlive it).
 */
function keyTextOf(id: string, product: ProductSpec): string {
  const spec = JSON.stringify([product.floor, product.filters]);
  let h = 0x811c9dc5;
  for (let i = 0; i < spec.length; i++) h = Math.imul(h ^ spec.charCodeAt(i), 0x01000193);
  return `${id}\u0001${(h >>> 0).toString(36)}`;
}
