/**
 * Codes for the values of a plain Utf8 column, found by hashing each cell's UTF-8 bytes in
 * place. A JS string is made once per distinct value, not once per row: decoding a string
 * per row was a fifth of the load time of a large snapshot.
 *
 * Codes are dense and numbered in order of first appearance, as a Map<string, code> over
 * the decoded strings would number them. Distinct byte sequences can decode to one string
 * (invalid UTF-8 becomes U+FFFD), so `finish` merges those codes.
 */
export class Utf8Coder {
  /** open addressing: code + 1, 0 = empty */
  private slots = new Int32Array(1024);
  private mask = 1023;
  /** per code: hash, and its bytes at pool[start[c] .. start[c+1]) */
  private hashes = new Int32Array(256);
  private start = new Int32Array(257);
  private pool = new Uint8Array(4096);
  private count = 0;

  /** The code of the bytes src[from .. to). */
  code(src: Uint8Array, from: number, to: number): number {
    // FNV-1a; kept an int32 so that it compares equal to the stored Int32Array copy.
    let h = 0x811c9dc5 | 0;
    for (let i = from; i < to; i++) h = Math.imul(h ^ src[i]!, 0x01000193);
    const len = to - from;
    const mask = this.mask;
    const slots = this.slots;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const c = slots[s]! - 1;
      if (c < 0) {
        slots[s] = this.add(src, from, to, h) + 1;
        if (this.count * 2 > mask) this.grow();
        return this.count - 1;
      }
      if (this.hashes[c] !== h) continue;
      const at = this.start[c]!;
      if (this.start[c + 1]! - at !== len) continue;
      let same = true;
      for (let i = 0; i < len; i++) {
        if (this.pool[at + i] !== src[from + i]) {
          same = false;
          break;
        }
      }
      if (same) return c;
    }
  }

  /**
   * The distinct strings (index = code), and a code map to apply to the codes handed out
   * when some of them decoded to the same string (null when none did).
   */
  finish(): { strings: string[]; remap: Int32Array | null } {
    const n = this.count;
    const text = Buffer.from(this.pool.buffer, this.pool.byteOffset, this.start[n]!);
    const strings: string[] = [];
    const codeOf = new Map<string, number>();
    let remap: Int32Array | null = null;
    for (let c = 0; c < n; c++) {
      const s = text.toString('utf8', this.start[c]!, this.start[c + 1]!);
      const seen = codeOf.get(s);
      if (seen === undefined) {
        codeOf.set(s, strings.length);
        strings.push(s);
        if (remap !== null) remap[c] = strings.length - 1;
      } else {
        if (remap === null) remap = Int32Array.from({ length: n }, (_, i) => i);
        remap[c] = seen;
      }
    }
    return { strings, remap };
  }

  private add(src: Uint8Array, from: number, to: number, h: number): number {
    const c = this.count++;
    if (c + 1 >= this.hashes.length) {
      this.hashes = grown(this.hashes, this.hashes.length * 2);
      this.start = grown(this.start, this.hashes.length + 1);
    }
    const at = this.start[c]!;
    const end = at + (to - from);
    if (end > this.pool.length) {
      const pool = new Uint8Array(Math.max(end, this.pool.length * 2));
      pool.set(this.pool.subarray(0, at));
      this.pool = pool;
    }
    this.pool.set(src.subarray(from, to), at);
    this.hashes[c] = h;
    this.start[c + 1] = end;
    return c;
  }

  private grow(): void {
    const size = this.slots.length * 2;
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let c = 0; c < this.count; c++) {
      let s = this.hashes[c]! & mask;
      while (slots[s] !== 0) s = (s + 1) & mask;
      slots[s] = c + 1;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function grown(a: Int32Array<ArrayBuffer>, length: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(length);
  out.set(a);
  return out;
}
