import type { Data } from 'apache-arrow';

/**
 * The buffers of an Arrow column's record batches as one batch's (join/arrow-passthrough.ts).
 * One batch starting at 0 (what an IPC body reads as) is passed as a view of its own
 * buffer; several are joined into new buffers, sized by the rows: typed-array loops, no
 * value decoded into a JS object.
 */

const bytesOf = (a: ArrayBufferView, from: number, length: number): Uint8Array => new Uint8Array(a.buffer, a.byteOffset + from, length);

/** Fixed-width values (`width` bytes each) of every batch in order. */
export function concatFixed(chunks: readonly Data[], rows: number, width: number): Uint8Array {
  if (chunks.length === 1) return bytesOf(chunks[0]!.values as ArrayBufferView, chunks[0]!.offset * width, rows * width);
  const out = new Uint8Array(rows * width);
  let at = 0;
  for (const d of chunks) {
    if (d.length === 0) continue;
    out.set(bytesOf(d.values as ArrayBufferView, d.offset * width, d.length * width), at);
    at += d.length * width;
  }
  return out;
}

/** A bitmap (validity, or Bool's values) of every batch in order; `bitsOf` null: every bit set (a batch without nulls). */
export function concatBits(chunks: readonly Data[], rows: number, bitsOf: (d: Data) => Uint8Array | null): Uint8Array {
  const bytes = Math.ceil(rows / 8);
  if (chunks.length === 1 && chunks[0]!.offset === 0) {
    const bits = bitsOf(chunks[0]!);
    if (bits !== null && bits.byteLength >= bytes) return bits.subarray(0, bytes);
  }
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const d of chunks) {
    const bits = bitsOf(d);
    for (let i = 0; i < d.length; i++, at++) {
      const j = d.offset + i;
      if (bits === null || (bits[j >> 3]! & (1 << (j & 7))) !== 0) out[at >> 3] = out[at >> 3]! | (1 << (at & 7));
    }
  }
  return out;
}

/**
 * Variable-width values (Utf8, Binary: `width` 4; their Large forms: 8): the offsets and the
 * bytes. Batches are joined with their offsets moved to where their bytes land; 64-bit
 * offsets are read and written as two 32-bit words (a body is at most 256 MiB: no offset
 * reaches 2^53).
 */
export function concatOffsets(chunks: readonly Data[], rows: number, width: 4 | 8): [Uint8Array, Uint8Array] {
  const offsetAt = (o: Int32Array, i: number): number => (width === 4 ? o[i]! : o[2 * i + 1]! * 4294967296 + (o[2 * i]! >>> 0));
  const words = (d: Data): Int32Array => {
    const o = d.valueOffsets as unknown as ArrayBufferView;
    return new Int32Array(o.buffer, o.byteOffset, o.byteLength >> 2);
  };
  if (chunks.length === 1) {
    const d = chunks[0]!;
    const o = words(d);
    if (d.offset === 0 && offsetAt(o, 0) === 0) {
      return [bytesOf(o, 0, (rows + 1) * width), bytesOf(d.values as ArrayBufferView, 0, offsetAt(o, rows))];
    }
  }
  const offsets = new Int32Array((rows + 1) * (width >> 2));
  let total = 0;
  for (const d of chunks) {
    const o = words(d);
    total += offsetAt(o, d.offset + d.length) - offsetAt(o, d.offset);
  }
  const data = new Uint8Array(total);
  let row = 0;
  let at = 0;
  for (const d of chunks) {
    const o = words(d);
    const first = offsetAt(o, d.offset);
    const end = offsetAt(o, d.offset + d.length);
    data.set(bytesOf(d.values as ArrayBufferView, first, end - first), at);
    for (let i = 1; i <= d.length; i++) putOffset(offsets, width, row + i, offsetAt(o, d.offset + i) - first + at);
    row += d.length;
    at += end - first;
  }
  return [new Uint8Array(offsets.buffer), data];
}

function putOffset(o: Int32Array, width: 4 | 8, i: number, v: number): void {
  if (width === 4) o[i] = v;
  else {
    const hi = Math.floor(v / 4294967296);
    o[2 * i] = v - hi * 4294967296;
    o[2 * i + 1] = hi;
  }
}

/**
 * Dictionary indices of every batch, each batch's moved by the lengths of the dictionaries
 * before its own (its dictionary replaced the last: the answer holds them one after the
 * other). Indices are non-negative, so read unsigned; 64-bit ones as two words.
 */
export function rebaseIndices(chunks: readonly Data[], rows: number, width: number, dictLengths: readonly number[]): Uint8Array {
  const out = new Uint8Array(rows * width);
  let row = 0;
  let base = 0;
  chunks.forEach((d, c) => {
    const src = bytesOf(d.values as ArrayBufferView, d.offset * width, d.length * width);
    const dst = out.subarray(row * width, (row + d.length) * width);
    moveBy(new Uint8Array(src), dst, width, base);
    row += d.length;
    base += dictLengths[c]!;
  });
  return out;
}

/** dst = src + base, as unsigned integers of `width` bytes (a copy of src: it may be unaligned in the body). */
function moveBy(src: Uint8Array, dst: Uint8Array, width: number, base: number): void {
  const n = src.byteLength / width;
  switch (width) {
    case 1:
      for (let i = 0; i < n; i++) dst[i] = src[i]! + base;
      return;
    case 2: {
      const s = new Uint16Array(src.buffer, 0, n);
      const t = new Uint16Array(dst.buffer, dst.byteOffset, n);
      for (let i = 0; i < n; i++) t[i] = s[i]! + base;
      return;
    }
    case 4: {
      const s = new Uint32Array(src.buffer, 0, n);
      const t = new Uint32Array(dst.buffer, dst.byteOffset, n);
      for (let i = 0; i < n; i++) t[i] = s[i]! + base;
      return;
    }
    default: {
      const s = new Uint32Array(src.buffer, 0, 2 * n);
      const t = new Uint32Array(dst.buffer, dst.byteOffset, 2 * n);
      for (let i = 0; i < n; i++) {
        const v = s[2 * i + 1]! * 4294967296 + s[2 * i]! + base;
        const hi = Math.floor(v / 4294967296);
        t[2 * i] = v - hi * 4294967296;
        t[2 * i + 1] = hi;
      }
    }
  }
}
