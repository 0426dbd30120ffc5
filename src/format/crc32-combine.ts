/** The reflected CRC-32 polynomial (gzip, zlib.crc32). */
const POLY = 0xedb88320;
/** bits of the CRC register: an operator on it is 32 rows of 32 bits */
const DIM = 32;
/** operators for 2^0 .. 2^52 zero bytes: any safe-integer length */
const STEPS = 53;

/**
 * crc32_combine: the CRC-32 of A+B from crc(A), crc(B) and the length of B, without
 * reading B again (zlib's crc32.c, the GF(2) matrix method). Appending a zero bit to a
 * message is linear over GF(2) on the CRC register: a 32x32 bit matrix, squared for 2, 4,
 * 8... zero bits. crc(A+B) = M^(8·len B) · crc(A) xor crc(B), M^(8·len B) being the product
 * of the squares for the bits set in len B. The response cache uses it to put a
 * per-request prefix in front of a cached gzip middle whose CRC-32 it keeps.
 *
 * zlib squares the matrices anew on every call (log2(len) squarings of 32² steps each);
 * here the operators for 2^k zero bytes are squared once, when the instance is made (one
 * per serving thread, about 7 KB), so a combine is at most one 32-step product per bit of
 * len B and allocates nothing.
 */
export class Crc32Combiner {
  /** rows k·DIM .. k·DIM+31: the operator appending 2^k zero bytes */
  private readonly ops = new Uint32Array(STEPS * DIM);

  constructor() {
    // One zero bit: the register shifts right by one, the polynomial xored in when bit 0 falls out.
    const bit = new Uint32Array(DIM);
    bit[0] = POLY;
    for (let n = 1; n < DIM; n++) bit[n] = (1 << (n - 1)) >>> 0;
    const two = new Uint32Array(DIM);
    const four = new Uint32Array(DIM);
    square(two, 0, bit, 0);
    square(four, 0, two, 0);
    square(this.ops, 0, four, 0); // eight zero bits: one zero byte
    for (let k = 1; k < STEPS; k++) square(this.ops, k * DIM, this.ops, (k - 1) * DIM);
  }

  /** crc32(A+B) from crc1 = crc32(A), crc2 = crc32(B), len2 = B's length in bytes (a safe integer ≥ 0). */
  combine(crc1: number, crc2: number, len2: number): number {
    if (len2 <= 0) return crc1 >>> 0;
    let crc = crc1 >>> 0;
    // Powers of one matrix commute: the order the bits of len2 are applied in does not matter.
    for (let len = len2, k = 0; len >= 1; len = Math.floor(len / 2), k++) if (len % 2 === 1) crc = times(this.ops, k * DIM, crc);
    return (crc ^ crc2) >>> 0;
  }
}

/** (rows at `at` of mat) · vec over GF(2): the xor of the rows whose bit is set in vec. */
function times(mat: Uint32Array, at: number, vec: number): number {
  let sum = 0;
  for (let i = at, v = vec >>> 0; v !== 0; i++, v >>>= 1) if ((v & 1) !== 0) sum ^= mat[i]!;
  return sum >>> 0;
}

/** dst rows at `d` = (src rows at `s`)²; dst and src may be one array (other rows). */
function square(dst: Uint32Array, d: number, src: Uint32Array, s: number): void {
  for (let n = 0; n < DIM; n++) dst[d + n] = times(src, s, src[s + n]!);
}
