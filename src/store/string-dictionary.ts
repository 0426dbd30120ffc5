import type { StringDictionary } from './column.js';
import { allocI32, allocU8 } from './shared-memory.js';

/**
 * Builds the dictionary of one string column from its distinct values (code = index), with
 * each value's UTF-8 bytes on shared memory (one copy for every serving thread).
 */
export function buildStringDictionary(values: readonly string[]): StringDictionary {
  const n = values.length;
  const codeOf = new Map<string, number>();
  for (let c = 0; c < n; c++) codeOf.set(values[c]!, c);
  if (codeOf.size !== n) throw new Error('buildStringDictionary: values must be distinct');

  let total = 0;
  for (let c = 0; c < n; c++) total += Buffer.byteLength(values[c]!, 'utf8');
  // Offsets are Int32: a column's distinct strings above 2 GiB would be a broken snapshot.
  if (total > 0x7fffffff) throw new Error('buildStringDictionary: dictionary exceeds 2 GiB');

  const utf8 = allocU8(total);
  const utf8Offsets = allocI32(n + 1);
  const writer = Buffer.from(utf8.buffer, utf8.byteOffset, utf8.byteLength);
  let off = 0;
  for (let c = 0; c < n; c++) {
    utf8Offsets[c] = off;
    off += writer.write(values[c]!, off, 'utf8');
  }
  utf8Offsets[n] = off;

  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => compareUtf8(values[a]!, values[b]!));
  const rank = allocI32(n);
  for (let r = 0; r < n; r++) rank[order[r]!] = r;

  return { values: [...values], utf8, utf8Offsets, rank, codeOf };
}

/**
 * Orders strings as their UTF-8 bytes would compare, without encoding them. JS `<` compares
 * UTF-16 code units, which misorders an astral character (a surrogate pair, 0xD800..) against
 * a BMP character at 0xE000..0xFFFF; comparing code points fixes that. A lone surrogate
 * counts as its own code point (the order of its WTF-8 bytes), so the order stays total.
 */
export function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    if (x < 0xd800 && y < 0xd800) return x - y;
    return codePointKey(a, i) - codePointKey(b, i);
  }
  return a.length - b.length;
}

/**
 * The sort key of the code point at unit i, knowing units 0..i-1 are equal in both strings.
 * A low surrogate completing a pair begun at i-1 means both strings share that high
 * surrogate, and this one is a whole astral character: it outranks any single code point.
 */
function codePointKey(s: string, i: number): number {
  const u = s.charCodeAt(i);
  if (u >= 0xd800 && u <= 0xdbff) {
    const next = s.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return 0x10000 + ((u - 0xd800) << 10) + (next - 0xdc00);
    return u;
  }
  if (u >= 0xdc00 && u <= 0xdfff && i > 0) {
    const prev = s.charCodeAt(i - 1);
    if (prev >= 0xd800 && prev <= 0xdbff) return 0x110000 + u;
  }
  return u;
}
