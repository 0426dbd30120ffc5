import { fnv1a } from './hash.js';

/**
 * Where a page chain stands. The token is opaque to callers (spec 4.4): base64url of a
 * fixed binary layout with a checksum, so a mangled token is recognised as such. It holds
 * the generation (every page of a chain is answered from one generation), the query's
 * fingerprint, the (date, series) of the last row served, how many rows came before, and
 * the total counted by the first page (so later pages need not count again).
 *
 * `lastExtra` is the third coordinate of a position where (date, series) is not enough:
 * the walk-forward's decision day of the last row (its rows repeat a key once per
 * decision), the vintages' physical row of the last version (a key lists several). The
 * plain query writes 0.
 */
export interface CursorState {
  readonly generation: number;
  readonly fingerprint: number;
  readonly lastDate: number;
  readonly lastSeries: number;
  readonly lastExtra: number;
  readonly offset: number;
  readonly total: number;
}

const VERSION = 2;
// offset and total are doubles: a walk-forward can count past 2^32 rows.
const SIZE = 41;
const SUM_AT = SIZE - 4;

export function encodeCursor(c: CursorState): string {
  const b = Buffer.allocUnsafe(SIZE);
  b.writeUInt8(VERSION, 0);
  b.writeUInt32LE(c.generation >>> 0, 1);
  b.writeUInt32LE(c.fingerprint >>> 0, 5);
  b.writeInt32LE(c.lastDate, 9);
  b.writeInt32LE(c.lastSeries, 13);
  b.writeInt32LE(c.lastExtra, 17);
  b.writeDoubleLE(c.offset, 21);
  b.writeDoubleLE(c.total, 29);
  b.writeUInt32LE(checksum(b), SUM_AT);
  return b.toString('base64url');
}

/** null when the token is not one of ours (or was altered). */
export function decodeCursor(token: string): CursorState | null {
  if (!/^[A-Za-z0-9_-]{55}$/.test(token)) return null;
  const b = Buffer.from(token, 'base64url');
  if (b.length !== SIZE || b.readUInt8(0) !== VERSION || b.readUInt32LE(SUM_AT) !== checksum(b)) return null;
  const c: CursorState = {
    generation: b.readUInt32LE(1),
    fingerprint: b.readUInt32LE(5),
    lastDate: b.readInt32LE(9),
    lastSeries: b.readInt32LE(13),
    lastExtra: b.readInt32LE(17),
    offset: b.readDoubleLE(21),
    total: b.readDoubleLE(29),
  };
  return Number.isSafeInteger(c.offset) && Number.isSafeInteger(c.total) && c.offset >= 0 && c.offset <= c.total && c.lastSeries >= 0 ? c : null;
}

function checksum(b: Buffer): number {
  return fnv1a(b.toString('latin1', 0, SUM_AT), 0x9e3779b9);
}
