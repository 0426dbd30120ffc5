import type { ByteWriter } from '../bytes/byte-writer.js';

/**
 * One string as a JSON string literal, for the few per-response strings (product id,
 * cursor, record id, metadata keys). Cell strings never come here: they are pre-rendered in
 * their column's dictionary.
 *
 * Those strings are printable ASCII in practice, which is copied as is; anything else takes
 * JSON.stringify (well-formed since ES2019: lone surrogates come out escaped).
 */
export function writeJsonString(out: ByteWriter, s: string): void {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      out.utf8(JSON.stringify(s));
      return;
    }
  }
  out.ensure(n + 2);
  const b = out.buf;
  let p = out.pos;
  b[p++] = 0x22;
  for (let i = 0; i < n; i++) b[p + i] = s.charCodeAt(i);
  p += n;
  b[p++] = 0x22;
  out.pos = p;
}
