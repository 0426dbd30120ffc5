import type { StringColumn, StringDictionary } from '../store/column.js';

const EMPTY_CODES = new Int32Array(0);
const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * Interns byte slices (UTF-8 text of a body's cells) as dense codes 0..n-1, so a column of
 * a million cells costs one Int32 per cell and one string per distinct value, not one
 * string per cell: FNV-1a over the bytes, open addressing, equal bytes compared. Its
 * distinct values become a StringDictionary (the shape every format writer reads).
 */
export class ByteInterner {
  /** distinct values' bytes, concatenated; value c is bytes[offsets[c] .. offsets[c+1]) */
  private bytes: Uint8Array = new Uint8Array(1024);
  private offsets: Int32Array = new Int32Array(64);
  private n = 0;
  private used = 0;
  /** open-addressing table of code + 1 (0 = empty) */
  private slots = new Int32Array(256);
  private hashes: Int32Array = new Int32Array(64);

  get size(): number {
    return this.n;
  }

  /** The code of src[start..end), interned on first sight. */
  intern(src: Uint8Array, start: number, end: number): number {
    let h = 0x811c9dc5 | 0;
    for (let i = start; i < end; i++) h = Math.imul(h ^ src[i]!, 0x01000193);
    const mask = this.slots.length - 1;
    let at = h & mask;
    const len = end - start;
    for (;;) {
      const s = this.slots[at]!;
      if (s === 0) break;
      const c = s - 1;
      if (this.hashes[c] === h) {
        const o = this.offsets[c]!;
        if (this.offsets[c + 1]! - o === len && equalBytes(this.bytes, o, src, start, len)) return c;
      }
      at = (at + 1) & mask;
    }
    const c = this.n++;
    if (this.n + 1 > this.offsets.length) {
      this.offsets = grown32(this.offsets, this.offsets.length * 2);
      this.hashes = grown32(this.hashes, this.hashes.length * 2);
    }
    if (this.used + len > this.bytes.length) {
      const next = new Uint8Array(Math.max(this.bytes.length * 2, this.used + len));
      next.set(this.bytes.subarray(0, this.used));
      this.bytes = next;
    }
    this.bytes.set(src.subarray(start, end), this.used);
    this.offsets[c] = this.used;
    this.used += len;
    this.offsets[c + 1] = this.used;
    this.hashes[c] = h;
    this.slots[at] = c + 1;
    if (this.n * 2 > this.slots.length) this.rehash();
    return c;
  }

  /** The code of a JS string (JSON bodies), interned on first sight. */
  internString(s: string): number {
    const b = Buffer.from(s, 'utf8');
    return this.intern(b, 0, b.length);
  }

  /** The distinct values as a dictionary (their strings decoded once each). `rank` is by UTF-8 bytes. */
  dictionary(): StringDictionary {
    const n = this.n;
    const values = new Array<string>(n);
    const utf8 = this.bytes.slice(0, this.used);
    const offsets = this.offsets.slice(0, n + 1);
    const codeOf = new Map<string, number>();
    for (let c = 0; c < n; c++) {
      const v = decoder.decode(utf8.subarray(offsets[c]!, offsets[c + 1]!));
      values[c] = v;
      if (!codeOf.has(v)) codeOf.set(v, c);
    }
    const order = Array.from({ length: n }, (_, i) => i).sort((a, b) =>
      Buffer.compare(utf8.subarray(offsets[a]!, offsets[a + 1]!), utf8.subarray(offsets[b]!, offsets[b + 1]!)),
    );
    const rank = new Int32Array(n);
    order.forEach((c, r) => (rank[c] = r));
    return { values, utf8, utf8Offsets: offsets, rank, codeOf };
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let c = 0; c < this.n; c++) {
      let at = this.hashes[c]! & mask;
      while (slots[at] !== 0) at = (at + 1) & mask;
      slots[at] = c + 1;
    }
    this.slots = slots;
  }
}

/** A string column of `count` cells: codes from an interner, nulls where validity is 0 (null: none). */
export function internedColumn(name: string, interner: ByteInterner, codes: Int32Array, validity: Uint8Array | null): StringColumn {
  return { kind: 'string', name, codes: codes.length === 0 ? EMPTY_CODES : codes, dict: interner.dictionary(), validity };
}

function equalBytes(a: Uint8Array, ai: number, b: Uint8Array, bi: number, len: number): boolean {
  for (let i = 0; i < len; i++) if (a[ai + i] !== b[bi + i]) return false;
  return true;
}

function grown32(a: Int32Array, n: number): Int32Array {
  const b = new Int32Array(n);
  b.set(a);
  return b;
}
