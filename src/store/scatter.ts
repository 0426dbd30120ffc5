/**
 * Moving column values into the table's row order: dst[rank[at + i]] = src[i]. Reading the
 * source in order lets a column be decoded straight from its Arrow record batches into the
 * final array, with no copy in snapshot order in between.
 *
 * The loops are per element width, each seeing one typed-array class: one generic loop fed
 * every column type goes megamorphic, and was most of the old gather's cost. Values move as
 * bits (Int64 and Float32 as integer words), never through BigInt or a float conversion.
 */
type Fixed = Float64Array | Float32Array | BigInt64Array | Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

export function scatterInto(src: Fixed, dst: Fixed, rank: Int32Array, at: number): void {
  if (src.BYTES_PER_ELEMENT !== dst.BYTES_PER_ELEMENT) throw new Error('scatterInto: element widths differ');
  switch (src.BYTES_PER_ELEMENT) {
    case 1:
      return scatter8(new Uint8Array(src.buffer, src.byteOffset, src.length), new Uint8Array(dst.buffer, dst.byteOffset, dst.length), rank, at);
    case 2:
      return scatter16(new Uint16Array(src.buffer, src.byteOffset, src.length), new Uint16Array(dst.buffer, dst.byteOffset, dst.length), rank, at);
    case 4:
      return scatter32(new Int32Array(src.buffer, src.byteOffset, src.length), new Int32Array(dst.buffer, dst.byteOffset, dst.length), rank, at);
    default:
      if (src instanceof Float64Array && dst instanceof Float64Array) return scatterF64(src, dst, rank, at);
      return scatterPairs(new Int32Array(src.buffer, src.byteOffset, src.length * 2), new Int32Array(dst.buffer, dst.byteOffset, dst.length * 2), rank, at);
  }
}

export function scatterF64(src: Float64Array, dst: Float64Array, rank: Int32Array, at: number): void {
  for (let i = 0; i < src.length; i++) dst[rank[at + i]!] = src[i]!;
}

export function scatter32(src: Int32Array, dst: Int32Array, rank: Int32Array, at: number): void {
  for (let i = 0; i < src.length; i++) dst[rank[at + i]!] = src[i]!;
}

function scatter16(src: Uint16Array, dst: Uint16Array, rank: Int32Array, at: number): void {
  for (let i = 0; i < src.length; i++) dst[rank[at + i]!] = src[i]!;
}

export function scatter8(src: Uint8Array, dst: Uint8Array, rank: Int32Array, at: number): void {
  for (let i = 0; i < src.length; i++) dst[rank[at + i]!] = src[i]!;
}

/** 64-bit values as two 32-bit words (lengths here are in words). */
function scatterPairs(src: Int32Array, dst: Int32Array, rank: Int32Array, at: number): void {
  const n = src.length >> 1;
  for (let i = 0; i < n; i++) {
    const r = 2 * rank[at + i]!;
    dst[r] = src[2 * i]!;
    dst[r + 1] = src[2 * i + 1]!;
  }
}
