import zlib from 'node:zlib';
import { Crc32Combiner } from './crc32-combine.js';

/** Content codings pitcache writes (contract 9). Node 20's zlib has no zstd. */
export type Encoding = 'gzip' | 'br';

/**
 * The encoded form of the part of an answer that depends only on (generation, request), its
 * cacheable middle (format-writer.ts): for JSON everything before `metadata`, for CSV the
 * whole body, for Arrow the record batch and the end-of-stream marker. It is encoded once and
 * kept by the response cache (as a "head": the gzip header and the middle's deflate data);
 * each request then adds its own bytes (JSON's retrieved_at, record_id, data_age_hours after
 * it; Arrow's schema message carrying the envelope before it) WITHOUT encoding it again:
 *
 * - gzip: the middle is deflated with a sync flush (byte-aligned, no final block, no trailer);
 *   a request appends its suffix as one final *stored* deflate block and the gzip trailer
 *   (CRC-32 continued from the middle's, total length). RFC 1951 3.2.4, RFC 1952. A prefix
 *   goes between the gzip header and the deflate data as non-final stored blocks: deflate's
 *   back-references are distances into what was decoded before them, and the middle's were
 *   computed with nothing before it, so none reaches back into the prefix. The trailer's
 *   CRC-32 of prefix + middle is combined from the two CRCs (crc32-combine.ts): the middle is
 *   never read again.
 * - br: the middle is compressed with a flush (byte-aligned, stream not finished); a request
 *   appends its suffix as *uncompressed* meta-blocks and an empty last meta-block. RFC 7932
 *   9.2. Uncompressed meta-blocks only copy bytes, so the middle's coding state is untouched.
 *   No prefix can go in front (wrapHead refuses): the stream header (WBITS) is bit-packed into
 *   the first meta-block's byte, and a distance larger than the bytes decoded so far refers
 *   to the static dictionary (RFC 7932 4, 8), so bytes in front of a compressed middle would
 *   turn its dictionary references into copies of the prefix.
 *
 * Either way the decoded bytes are exactly prefix + middle + suffix, and a cache hit costs a
 * copy of the stored bytes and the per-request bytes, not a compression.
 */
export interface EncodedHead {
  readonly encoding: Encoding;
  readonly bytes: Uint8Array;
  /** CRC-32 of the decoded head (gzip's trailer continues it) */
  readonly crc: number;
  /** decoded head length in bytes */
  readonly length: number;
}

export interface Levels {
  /** zlib level 1..9 */
  readonly gzip: number;
  /** brotli quality 0..11 */
  readonly br: number;
}

/** Measured in bench/micro (see RESULTS.md): fast levels keep a 3 MB page under a few ms of one core. */
export const DEFAULT_LEVELS: Levels = { gzip: 1, br: 3 };

const GZIP_FLUSH = { finishFlush: zlib.constants.Z_SYNC_FLUSH } as const;

function brotliOptions(quality: number, sizeHint: number): zlib.BrotliOptions {
  return {
    finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
    params: { [zlib.constants.BROTLI_PARAM_QUALITY]: quality, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint },
  };
}

/** Encodes a head synchronously (small bodies, or off the serving thread). */
export function encodeHead(head: Uint8Array, encoding: Encoding, levels: Levels = DEFAULT_LEVELS): EncodedHead {
  const bytes =
    encoding === 'gzip' ? zlib.gzipSync(head, { ...GZIP_FLUSH, level: levels.gzip }) : zlib.brotliCompressSync(head, brotliOptions(levels.br, head.byteLength));
  return { encoding, bytes, crc: zlib.crc32(head), length: head.byteLength };
}

/**
 * Encodes a head on libuv's thread pool, so a large page does not hold the serving thread
 * (the event loop keeps answering other requests meanwhile). `head` must stay unchanged
 * until the promise settles: pass an owned copy, never a reused view.
 */
export function encodeHeadAsync(head: Uint8Array, encoding: Encoding, levels: Levels = DEFAULT_LEVELS): Promise<EncodedHead> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, bytes: Buffer): void => {
      if (err !== null) reject(err);
      else resolve({ encoding, bytes, crc: zlib.crc32(head), length: head.byteLength });
    };
    if (encoding === 'gzip') zlib.gzip(head, { ...GZIP_FLUSH, level: levels.gzip }, done);
    else zlib.brotliCompress(head, brotliOptions(levels.br, head.byteLength), done);
  });
}

const STORED_MAX = 0xffff;
/** brotli: MLEN is at most 2^16 with four nibbles */
const META_MAX = 0x10000;

/** Bytes `finishEncoded` writes for a tail of `n` bytes. */
export function tailSize(encoding: Encoding, n: number): number {
  if (encoding === 'gzip') return 5 * Math.max(1, Math.ceil(n / STORED_MAX)) + n + 8;
  return 3 * Math.ceil(n / META_MAX) + n + 1;
}

/**
 * Writes head + encoded tail into `out` at 0 and returns the length: the whole encoded
 * body. `out` must have room for `head.bytes.length + tailSize(...)`.
 */
export function finishEncoded(head: EncodedHead, tail: Uint8Array, out: Uint8Array): number {
  out.set(head.bytes, 0);
  return writeTail(head, tail, out, head.bytes.byteLength);
}

/** zlib's gzip header: the 10 fixed bytes of RFC 1952 2.3 (Node sets no FNAME, FEXTRA, FCOMMENT or FHCRC). */
export const GZIP_HEADER_BYTES = 10;

/** Bytes a prefix of `n` bytes takes in an encoded body: non-final stored blocks (gzip); none when empty. */
export function prefixSize(encoding: Encoding, n: number): number {
  if (n === 0) return 0;
  if (encoding === 'br') throw new RangeError('a brotli body cannot carry a prefix before an encoded head');
  return 5 * Math.ceil(n / STORED_MAX) + n;
}

/**
 * The body prefix + head + tail, around an encoded head whose stored bytes (`size` of them:
 * the gzip header, then the deflate data) the caller placed in `out` at `prefixSize(encoding,
 * prefix.length)`: the gzip header moves to the front, the prefix goes after it as stored
 * blocks, right before the deflate data, and the tail and trailer follow it (writeTail).
 * Returns the end. With an empty prefix this is writeTail at `size`, byte for byte.
 */
export function wrapHead(head: Pick<EncodedHead, 'encoding' | 'crc' | 'length'>, size: number, prefix: Uint8Array, tail: Uint8Array, out: Uint8Array): number {
  const n = prefix.byteLength;
  if (n === 0) return writeTail(head, tail, out, size);
  const at = prefixSize(head.encoding, n);
  out.copyWithin(0, at, at + GZIP_HEADER_BYTES);
  writeStored(prefix, false, out, GZIP_HEADER_BYTES);
  combinerOfThread ??= new Crc32Combiner();
  // What the decoder reads is prefix + head: its CRC-32 and length are the pair's (one object for a prefixed answer, none per row).
  const whole = { encoding: head.encoding, crc: combinerOfThread.combine(zlib.crc32(prefix), head.crc, head.length), length: n + head.length };
  return writeTail(whole, tail, out, at + size);
}

/** The thread's CRC combiner (a module is per thread), made when a first prefix needs it. */
let combinerOfThread: Crc32Combiner | null = null;

/** The tail after a head of `head.length` decoded bytes whose CRC-32 is `head.crc`. */
function writeTail(head: Pick<EncodedHead, 'encoding' | 'crc' | 'length'>, tail: Uint8Array, out: Uint8Array, p: number): number {
  const { encoding, crc, length } = head;
  const n = tail.byteLength;
  if (encoding === 'gzip') {
    p = writeStored(tail, true, out, p);
    // zlib.crc32(empty, crc) answers 0 on some calls in Node 20 instead of crc: do not ask it.
    p = writeUint32LE(out, p, (n === 0 ? crc : zlib.crc32(tail, crc)) >>> 0);
    return writeUint32LE(out, p, (length + n) >>> 0);
  }
  for (let at = 0; at < n; at += META_MAX) {
    const len = Math.min(META_MAX, n - at);
    // ISLAST=0, MNIBBLES=0 (four nibbles), MLEN-1 (16 bits), ISUNCOMPRESSED=1, then padding to the byte.
    const v = ((len - 1) << 3) | (1 << 19);
    out[p++] = v & 0xff;
    out[p++] = (v >>> 8) & 0xff;
    out[p++] = (v >>> 16) & 0xff;
    out.set(tail.subarray(at, at + len), p);
    p += len;
  }
  out[p++] = 3; // ISLAST=1, ISLASTEMPTY=1
  return p;
}

/** `src` as stored deflate blocks at `p` (at least one, even for no bytes), the last one final if `final`; returns the end. */
function writeStored(src: Uint8Array, final: boolean, out: Uint8Array, p: number): number {
  const n = src.byteLength;
  let at = 0;
  do {
    const len = Math.min(STORED_MAX, n - at);
    const last = at + len === n;
    out[p++] = final && last ? 1 : 0; // BFINAL, BTYPE=00 (stored); already byte-aligned after a sync flush or a stored block
    out[p++] = len & 0xff;
    out[p++] = len >>> 8;
    out[p++] = ~len & 0xff;
    out[p++] = (~len >>> 8) & 0xff;
    out.set(src.subarray(at, at + len), p);
    p += len;
    at += len;
  } while (at < n);
  return p;
}

function writeUint32LE(out: Uint8Array, p: number, v: number): number {
  out[p] = v & 0xff;
  out[p + 1] = (v >>> 8) & 0xff;
  out[p + 2] = (v >>> 16) & 0xff;
  out[p + 3] = v >>> 24;
  return p + 4;
}
