import { putFloat } from './format-float.js';
import { MAX_NUMBER_BYTES, putInt, putNull } from './format-number.js';

/** Up to this many bytes a JS loop copies faster than a subarray + set (which allocates). */
const LOOP_COPY_MAX = 64;

/** Views kept by `view`, one per length modulo this (a power of two). */
const VIEW_SLOTS = 256;

/**
 * A growable output buffer, reused across responses. Hot writers reserve room once with
 * `ensure` and then write into `buf` at `pos` directly; the methods here are for the rest.
 */
export class ByteWriter {
  private storage: Buffer;
  /**
   * Bytes written so far. Hot writers reserve room with `ensure`, write into `buf` from
   * here, and set it to their end (never past what they reserved): that is the protocol.
   */
  pos = 0;
  /**
   * views[n % VIEW_SLOTS]: the last view of the storage made for a length of n, or
   * undefined. A view is about 100 bytes of heap; a header block or a suffix comes back at
   * the same few lengths request after request, so those views are made once (docs/decisions.md#allocation:
   * near-zero allocation per request). Bodies of varying length mostly miss, and cost what
   * they did. Emptied when the storage is replaced.
   */
  private readonly views: (Uint8Array | undefined)[] = new Array<Uint8Array | undefined>(VIEW_SLOTS).fill(undefined);

  constructor(initialCapacity = 64 * 1024) {
    this.storage = Buffer.allocUnsafe(Math.max(16, initialCapacity));
  }

  /** Current storage: replaced (never shrunk) when it grows, so re-read it after `ensure`. Only this class swaps it. */
  get buf(): Buffer {
    return this.storage;
  }

  reset(): void {
    this.pos = 0;
  }

  /** Makes room for n more bytes. */
  ensure(n: number): void {
    if (this.pos + n > this.storage.length) this.grow(n);
  }

  private grow(n: number): void {
    let cap = this.storage.length * 2;
    while (cap < this.pos + n) cap *= 2;
    const next = Buffer.allocUnsafe(cap);
    this.storage.copy(next, 0, 0, this.pos);
    this.storage = next;
    this.views.fill(undefined);
  }

  /** The bytes written since the last reset; valid until the next reset or write (the same object for the same length, while the storage stays). */
  view(): Uint8Array {
    const n = this.pos;
    const slot = n & (VIEW_SLOTS - 1);
    const kept = this.views[slot];
    if (kept !== undefined && kept.length === n) return kept;
    const v = this.storage.subarray(0, n);
    this.views[slot] = v;
    return v;
  }

  byte(b: number): void {
    this.ensure(1);
    this.storage[this.pos++] = b;
  }

  /** src[start..end) */
  bytes(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    this.ensure(n);
    this.pos = copyBytes(this.storage, this.pos, src, start, end);
  }

  /** A string of code units below 256, one byte each (latin1). */
  ascii(s: string): void {
    this.ensure(s.length);
    const b = this.storage;
    const p = this.pos;
    if (s.length <= LOOP_COPY_MAX) {
      for (let i = 0; i < s.length; i++) b[p + i] = s.charCodeAt(i);
    } else {
      b.write(s, p, 'latin1');
    }
    this.pos = p + s.length;
  }

  /** Any string, UTF-8 encoded. */
  utf8(s: string): void {
    this.ensure(Buffer.byteLength(s, 'utf8'));
    this.pos += this.storage.write(s, this.pos, 'utf8');
  }

  /** An integer of magnitude at most 2^53. */
  int(n: number): void {
    this.ensure(MAX_NUMBER_BYTES);
    this.pos = putInt(this.storage, this.pos, n);
  }

  /** A double as an exactly round-tripping JSON number; NaN and infinities as null. */
  float(x: number): void {
    this.ensure(MAX_NUMBER_BYTES);
    this.pos = putFloat(this.storage, this.pos, x);
  }

  null(): void {
    this.ensure(4);
    this.pos = putNull(this.storage, this.pos);
  }
}

/** Copies src[start..end) to b at p (room reserved); returns the next position. */
export function copyBytes(b: Uint8Array, p: number, src: Uint8Array, start: number, end: number): number {
  const n = end - start;
  if (n <= LOOP_COPY_MAX) {
    for (let i = 0; i < n; i++) b[p + i] = src[start + i]!;
  } else {
    b.set(src.subarray(start, end), p);
  }
  return p + n;
}
