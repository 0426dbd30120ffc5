import type { StringDictionary } from '../../store/column.js';

/**
 * Every value of one string dictionary as a JSON string literal (quoted, escaped, UTF-8),
 * so writing a string cell is one byte copy. Literal of code c is
 * bytes[offsets[c] .. offsets[c+1]); `maxBytes` bounds any one of them.
 */
export interface JsonLiterals {
  readonly bytes: Uint8Array;
  readonly offsets: Int32Array;
  readonly maxBytes: number;
}

/**
 * The literals are JSON's, so they live with the JSON writer, not in the dictionary (which
 * holds strings and codes for every format). Built on first use per dictionary and thread,
 * then kept as long as the dictionary lives (a WeakMap: a superseded generation takes its
 * literals with it). This is a memo of immutable derived bytes, not scratch state.
 */
const cache = new WeakMap<StringDictionary, JsonLiterals>();

export function jsonLiterals(dict: StringDictionary): JsonLiterals {
  let lit = cache.get(dict);
  if (lit === undefined) {
    lit = buildJsonLiterals(dict.values);
    cache.set(dict, lit);
  }
  return lit;
}

/**
 * JSON.stringify is the escaper: it runs once per distinct value, and since ES2019 it is
 * well-formed (lone surrogates come out as `\udXXX`), so its output encodes to UTF-8
 * without loss and always parses.
 */
export function buildJsonLiterals(values: readonly string[]): JsonLiterals {
  const n = values.length;
  const literals = new Array<string>(n);
  let total = 0;
  for (let c = 0; c < n; c++) {
    const lit = JSON.stringify(values[c]!);
    literals[c] = lit;
    total += Buffer.byteLength(lit, 'utf8');
  }
  if (total > 0x7fffffff) throw new Error('jsonLiterals: literals exceed 2 GiB');
  const bytes = Buffer.allocUnsafeSlow(total);
  const offsets = new Int32Array(n + 1);
  let off = 0;
  let maxBytes = 0;
  for (let c = 0; c < n; c++) {
    offsets[c] = off;
    const len = bytes.write(literals[c]!, off, 'utf8');
    if (len > maxBytes) maxBytes = len;
    off += len;
  }
  offsets[n] = off;
  return { bytes, offsets, maxBytes };
}
