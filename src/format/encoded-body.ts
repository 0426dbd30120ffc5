import zlib from 'node:zlib';

/** Content codings pitcache writes (contract 9). Node 20's zlib has no zstd. */
export type Encoding = 'gzip' | 'br';

/**
 * The encoded form of the part of an answer that depends only on (generation, request): for
 * JSON everything before `metadata`, for CSV the whole body. It is encoded once and kept by
 * the response cache; each request then appends its own bytes (retrieved_at, record_id,
 * data_age_hours) WITHOUT encoding the head again:
 *
 * - gzip: the head is deflated with a sync flush (byte-aligned, no final block, no trailer);
 *   a request appends its tail as one final *stored* deflate block and the gzip trailer
 *   (CRC-32 continued from the head's, total length). RFC 1951 3.2.4, RFC 1952.
 * - br: the head is compressed with a flush (byte-aligned, stream not finished); a request
 *   appends its tail as *uncompressed* meta-blocks and an empty last meta-block. RFC 7932
 *   9.2. Uncompressed meta-blocks only copy bytes, so the head's coding state is untouched.
 *
 * Either way the decoded bytes are exactly head + tail, and a cache hit costs a copy of the
 * tail, not a compression.
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

/** Writes only the encoded tail at `p` (the caller placed the head before it); returns the end. */
export function writeTail(head: Pick<EncodedHead, 'encoding' | 'crc' | 'length'>, tail: Uint8Array, out: Uint8Array, p: number): number {
  const n = tail.byteLength;
  if (head.encoding === 'gzip') {
    let at = 0;
    do {
      const len = Math.min(STORED_MAX, n - at);
      const last = at + len === n;
      out[p++] = last ? 1 : 0; // BFINAL, BTYPE=00 (stored); already byte-aligned after the sync flush
      out[p++] = len & 0xff;
      out[p++] = len >>> 8;
      out[p++] = ~len & 0xff;
      out[p++] = (~len >>> 8) & 0xff;
      out.set(tail.subarray(at, at + len), p);
      p += len;
      at += len;
    } while (at < n);
    // zlib.crc32(empty, crc) answers 0 on some calls in Node 20 instead of crc: do not ask it.
    p = writeUint32LE(out, p, (n === 0 ? head.crc : zlib.crc32(tail, head.crc)) >>> 0);
    return writeUint32LE(out, p, (head.length + n) >>> 0);
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

function writeUint32LE(out: Uint8Array, p: number, v: number): number {
  out[p] = v & 0xff;
  out[p + 1] = (v >>> 8) & 0xff;
  out[p + 2] = (v >>> 16) & 0xff;
  out[p + 3] = v >>> 24;
  return p + 4;
}
