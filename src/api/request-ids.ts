import { randomBytes } from 'node:crypto';

const DIGITS = 10;
const ZERO = 0x30;
const NINE = 0x39;
const A = 0x61;
const Z = 0x7a;

/**
 * `req_` + 18 characters of [0-9a-z]: 8 random per process (so ids differ across restarts
 * and threads) and a base-36 counter of 10 digits, from zero. Unique per request without a
 * random draw per request. The id's text is kept as bytes and its counter counted in
 * place: a serving thread's handler takes the bytes themselves (`advance`, no string at
 * all: http/record-id.ts), anything else a string (`next`).
 */
export class RequestIds {
  private readonly text: Buffer;

  constructor(random: Uint8Array = randomBytes(8)) {
    let p = '';
    for (let i = 0; i < 8; i++) p += (random[i]! % 36).toString(36);
    // The counter one before zero: each id counts first, so the first is all zeros.
    this.text = Buffer.from(`req_${p}${'z'.repeat(DIGITS)}`, 'latin1');
  }

  /** The next id, as a string of its own. */
  next(): string {
    this.increment();
    return this.text.toString('latin1');
  }

  /** The next id as this object's bytes, rewritten by the next `advance` or `next` (a RecordId). */
  advance(): Uint8Array {
    this.increment();
    return this.text;
  }

  /** The counter + 1 in base 36, digit by digit from the last (36^10 ids before it wraps to zeros). */
  private increment(): void {
    const t = this.text;
    for (let i = t.length - 1; i >= t.length - DIGITS; i--) {
      const c = t[i]!;
      if (c === Z) {
        t[i] = ZERO;
        continue;
      }
      t[i] = c === NINE ? A : c + 1;
      return;
    }
  }
}
