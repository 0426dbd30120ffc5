import { randomBytes } from 'node:crypto';

/**
 * `req_` + 18 characters of [0-9a-z]: 8 random per process (so ids differ across restarts
 * and threads) and a base-36 counter. Unique per request without a random draw per request.
 */
export class RequestIds {
  private readonly prefix: string;
  private counter = 0;

  constructor(random: Uint8Array = randomBytes(8)) {
    let p = '';
    for (let i = 0; i < 8; i++) p += (random[i]! % 36).toString(36);
    this.prefix = `req_${p}`;
  }

  next(): string {
    return this.prefix + (this.counter++).toString(36).padStart(10, '0');
  }
}
