/** The reflected CRC-32 polynomial (gzip, zlib.crc32). */
const POLY = 0xedb88320;
const DIM = 32;

/**
 * crc32_combine: the CRC-32 of A+B from crc(A), crc(B) and the length of B, without
 * reading B again (zlib's crc32.c, the GF(2) matrix method). Appending n zero bits to a
 * message is linear over GF(2) on the CRC register, a 32x32 bit matrix; it is squared
 * for 2, 4, 8... zero bits and applied to crc(A) for each bit set in 8·len(B), then crc(B)
 * is xored in. O(32² · log len) operations, whatever B's length: the response cache
 * uses it to put a per-request prefix in front of a cached gzip head whose CRC-32 is kept.
 *
 * The two matrices are scratch owned by the instance (one per serving thread), so a
 * combine allocates nothing.
 */
export class Crc32Combiner {
  private readonly even = new Uint32Array(DIM);
  private readonly odd = new Uint32Array(DIM);

  /** crc32(A+B) from crc1 = crc32(A), crc2 = crc32(B), len2 = B's length in bytes (any safe integer ≥ 0). */
  combine(crc1: number, crc2: number, len2: number): number {
    if (len2 <= 0) return crc1 >>> 0;
    const { even, odd } = this;
    // odd: the operator for one zero bit.
    odd[0] = POLY;
    for (let n = 1, row = 1; n < DIM; n++, row <<= 1) odd[n] = row;
    square(even, odd); // two zero bits
    square(odd, even); // four zero bits
    let crc = crc1 >>> 0;
    // Each step squares the operator (one zero byte first, then 2, 4, ...) and applies it for a set bit of len2.
    let len = len2;
    for (;;) {
      square(even, odd);
      if (len % 2 === 1) crc = times(even, crc);
      len = Math.floor(len / 2);
      if (len === 0) break;
      square(odd, even);
      if (len % 2 === 1) crc = times(odd, crc);
      len = Math.floor(len / 2);
      if (len === 0) break;
    }
    return (crc ^ crc2) >>> 0;
  }
}

/** mat · vec over GF(2): the xor of the rows whose bit is set in vec. */
function times(mat: Uint32Array, vec: number): number {
  let sum = 0;
  for (let i = 0, v = vec >>> 0; v !== 0; i++, v >>>= 1) if ((v & 1) !== 0) sum ^= mat[i]!;
  return sum >>> 0;
}

/** sq = mat · mat */
function square(sq: Uint32Array, mat: Uint32Array): void {
  for (let n = 0; n < DIM; n++) sq[n] = times(mat, mat[n]!);
}
