import { randomBytes } from 'node:crypto';

const DIGITS = 10;
const ZERO = 0x30;
const NINE = 0x39;
const A = 0x61;
const Z = 0x7a;

/**
 * `req_` + 18 characters of [0-9a-z]: 8 random per process (so ids differ across restarts
 * and threads) and a base-36 counter of 10 digits. Unique per request without a random
 * draw per request. The id's text is kept as bytes and its counter counted in place, so a
 * request makes one string, not three (number to text, padding, concatenation).
 */
export class RequestIds {
  private readonly text: Buffer;

  constructor(random: Uint8Array = randomBytes(8)) {
    let p = '';
    for (let i = 0; i < 8; i++) p += (random[i]! % 36).toString(36);
    this.text = Buffer.from(`req_${p}${'0'.repeat(DIGITS)}`, 'latin1');
  }

  next(): string {
    const id = this.text.toString('latin1');
    this.increment();
    return id;
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
