/** Smallest buffer handed out: rests are at least a few hundred KB (bodies over ONE_SHOT_BYTES). */
const MIN_BYTES = 64 * 1024;

/**
 * Reusable copies of large bodies' unsent rest (uws-server.ts, endWithBackpressure), one
 * pool per listening app. A rest used to be a fresh Buffer per large answer: about 1 MB of
 * ArrayBuffer outside the V8 heap each time, and V8 starts a full mark-compact whenever such
 * external memory has grown 64 MB since the last one (`--trace-incremental-marking`:
 * "Start (external memory pressure)"), so 10,000-row pages caused a mark-compact every
 * ~60 answers. A buffer taken here goes back when its answer is finished and is used again.
 *
 * Free buffers are kept up to `maxFreeBytes`; past that a released one is left to the GC.
 */
export class RestBuffers {
  private readonly free: Buffer[] = [];
  private freeBytes = 0;

  constructor(private readonly maxFreeBytes: number) {}

  /** A buffer holding a copy of src at 0 (it may be longer than src): the smallest free one that fits, or a new one. */
  take(src: Uint8Array): Buffer {
    const n = src.byteLength;
    let best = -1;
    for (let i = 0; i < this.free.length; i++) {
      const len = this.free[i]!.length;
      if (len >= n && (best < 0 || len < this.free[best]!.length)) best = i;
    }
    let buf: Buffer;
    if (best >= 0) {
      buf = this.free[best]!;
      this.free[best] = this.free[this.free.length - 1]!;
      this.free.pop();
      this.freeBytes -= buf.length;
    } else {
      let size = MIN_BYTES;
      while (size < n) size *= 2;
      buf = Buffer.allocUnsafeSlow(size);
    }
    buf.set(src, 0);
    return buf;
  }

  /** Gives back a buffer from `take` once nothing reads it any more. */
  release(buf: Buffer): void {
    if (this.freeBytes + buf.length > this.maxFreeBytes) return;
    this.free.push(buf);
    this.freeBytes += buf.length;
  }

  /** Bytes of free buffers kept (tests). */
  get keptBytes(): number {
    return this.freeBytes;
  }
}
