import type { Column, StringColumn } from './column.js';

/**
 * A column as read from a snapshot (decode-arrow.ts), before it is placed in a table:
 * strings still as codes into the snapshot's own strings. Its own file because both the
 * decoder and the per-column readers it calls (arrow-column.ts) name it.
 */
export type DecodedColumn =
  | Exclude<Column, StringColumn>
  | { readonly kind: 'string'; readonly name: string; readonly validity: Uint8Array | null; readonly codes: Int32Array; readonly strings: string[] };
