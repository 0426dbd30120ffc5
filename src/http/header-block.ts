/**
 * Response headers handed to the transport as bytes instead of name/value strings. A data
 * answer carries about ten headers (ETag, x-count, x-data-age-hours, Link...); as pairs
 * each costs a string or two per request, and the transport then crosses into native code
 * once per header. Written into a buffer the endpoint reuses they cost neither (docs/decisions.md#allocation:
 * near-zero allocation per request).
 *
 * uWS's `writeHeader(name, value)` writes `name: value\r\n` exactly as given, so a whole
 * block goes out in one call: `first` as the name and `rest` as the value, where `rest` is
 * the first header's value, then `\r\n` and `name: value` for each further header (no
 * trailing CRLF). Names and values are the endpoint's own (never request text that could
 * hold CR or LF: a request line with them does not parse).
 */
export interface HeaderBlock {
  /** the first header's name */
  readonly first: string;
  /** the first header's value, then `\r\n` + `name: value` per further header; may be a reused view */
  readonly rest: Uint8Array;
}

/** The block as pairs, in order: what a client reads (the in-process harness, tests). */
export function headerBlockPairs(block: HeaderBlock): Array<[string, string]> {
  const lines = Buffer.from(block.rest.buffer, block.rest.byteOffset, block.rest.byteLength).toString('latin1').split('\r\n');
  const pairs: Array<[string, string]> = [[block.first, lines[0]!]];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(': ');
    if (colon <= 0) throw new Error(`malformed header line in a block: ${JSON.stringify(line)}`);
    pairs.push([line.slice(0, colon), line.slice(colon + 2)]);
  }
  return pairs;
}

/** A block that outlives the buffer it was written in (an answer finished after an await). */
export function ownedBlock(block: HeaderBlock): HeaderBlock {
  return { first: block.first, rest: Buffer.from(block.rest) };
}
