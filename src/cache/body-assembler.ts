import { prefixSize, tailSize, wrapHead, type EncodedHead } from '../format/encoded-body.js';
import type { CachedHead, ResponseCache } from './response-cache.js';

/**
 * Puts an answer's body together: the per-request prefix, the middle (identity, encoded,
 * or kept by the response cache) and the per-request suffix, in one buffer reused by every
 * answer of its serving thread (format-writer.ts, encoded-body.ts). Bodies are views valid
 * until the next call. One per serving thread: it owns the buffer.
 */
export class BodyAssembler {
  private buf = Buffer.allocUnsafe(64 * 1024);

  /** prefix + an encoded middle + suffix. */
  encoded(head: EncodedHead, prefix: Uint8Array, suffix: Uint8Array): Uint8Array {
    const at = prefixSize(head.encoding, prefix.byteLength);
    const out = this.room(at + head.bytes.byteLength + tailSize(head.encoding, suffix.byteLength));
    out.set(head.bytes, at);
    return out.subarray(0, wrapHead(head, head.bytes.byteLength, prefix, suffix, out));
  }

  /**
   * prefix + a middle kept by `cache` + suffix: without a prefix, an identity middle and its
   * suffix as they sit in the cache's arena (ResponseCache.bodyWith: a 35 KB answer is then not
   * copied once more before the socket copies it); else copied out of its pages.
   */
  hit(cache: ResponseCache, hit: CachedHead, prefix: Uint8Array, suffix: Uint8Array): Uint8Array {
    const p = prefix.byteLength;
    if (hit.encoding === null) {
      if (p === 0) {
        const whole = cache.bodyWith(hit, suffix);
        if (whole !== null) return whole;
      }
      const n = p + hit.bytes + suffix.byteLength;
      const out = this.room(n);
      out.set(prefix, 0);
      cache.copyHead(hit, out, p);
      out.set(suffix, p + hit.bytes);
      return out.subarray(0, n);
    }
    const at = prefixSize(hit.encoding, p);
    const out = this.room(at + hit.bytes + tailSize(hit.encoding, suffix.byteLength));
    cache.copyHead(hit, out, at);
    return out.subarray(0, wrapHead(hit, hit.bytes, prefix, suffix, out));
  }

  private room(n: number): Buffer {
    if (this.buf.length < n) this.buf = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
    return this.buf;
  }
}
