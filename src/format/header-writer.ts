import type { HeaderBlock } from '../http/header-block.js';
import { ByteWriter } from './bytes/byte-writer.js';
import { putCivilDate } from './bytes/format-time.js';

/**
 * Writes a HeaderBlock (http/header-block.ts) into one buffer reused for every answer of
 * its endpoint: `start(name)` begins a header, the value methods append to its value.
 * Numbers and dates go in as digits, so a block costs no string per header. The block
 * returned by `block()` is valid until the next `reset`.
 */
export class HeaderWriter {
  private readonly out = new ByteWriter(1024);
  private first = '';
  private readonly current: { first: string; rest: Uint8Array } = { first: '', rest: new Uint8Array(0) };

  reset(): void {
    this.out.reset();
    this.first = '';
  }

  /** Begins header `name` (lower case, a token); its value follows. */
  start(name: string): this {
    if (this.first === '') {
      this.first = name;
      return this;
    }
    const o = this.out;
    o.ensure(4 + name.length);
    o.buf[o.pos++] = 0x0d;
    o.buf[o.pos++] = 0x0a;
    o.ascii(name);
    o.buf[o.pos++] = 0x3a;
    o.buf[o.pos++] = 0x20;
    return this;
  }

  /** Visible ASCII (the caller's constant or a value from a fixed vocabulary). */
  ascii(s: string): this {
    this.out.ascii(s);
    return this;
  }

  /** Any text, UTF-8 encoded (a request's own path and query, as the transport would write a string). */
  utf8(s: string): this {
    this.out.utf8(s);
    return this;
  }

  /** An integer of magnitude at most 2^53, in decimal. */
  int(n: number): this {
    this.out.int(n);
    return this;
  }

  /** A finite double as JavaScript writes it (String(x)). */
  float(x: number): this {
    this.out.float(x);
    return this;
  }

  /** Days since epoch as `YYYY-MM-DD`. */
  date(days: number): this {
    const o = this.out;
    o.ensure(16);
    o.pos = putCivilDate(o.buf, o.pos, days);
    return this;
  }

  /** An unsigned 32-bit integer in base 36, as Number.prototype.toString(36) writes it. */
  base36(n: number): this {
    const o = this.out;
    o.ensure(7);
    let v = n >>> 0;
    let len = 1;
    for (let t = v; t >= 36; t = Math.floor(t / 36)) len++;
    const b = o.buf;
    for (let i = o.pos + len - 1; i >= o.pos; i--) {
      const d = v % 36;
      b[i] = d < 10 ? 0x30 + d : 0x57 + d;
      v = Math.floor(v / 36);
    }
    o.pos += len;
    return this;
  }

  /** The headers written since `reset`; the object and its bytes are reused by the next one. */
  block(): HeaderBlock {
    if (this.first === '') throw new Error('HeaderWriter.block(): no header written');
    this.current.first = this.first;
    this.current.rest = this.out.view();
    return this.current;
  }
}
