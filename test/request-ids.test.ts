import { describe, expect, it } from 'vitest';
import { RequestIds } from '../src/server/request-ids.js';

describe('RequestIds: req_ + 8 random base-36 characters + a 10-digit base-36 counter', () => {
  it('counts in base 36 from zero, carrying through every digit, after a prefix taken from the random bytes', () => {
    const random = Uint8Array.from([0, 35, 36, 71, 200, 9, 10, 255]);
    const prefix = `req_${Array.from(random, (b) => (b % 36).toString(36)).join('')}`;
    expect(prefix).toBe('req_0z0zk9a3');
    const ids = new RequestIds(random);
    // past 36^3, so three carries have rippled
    for (let n = 0; n < 50_000; n++) {
      const id = ids.next();
      if (id !== prefix + n.toString(36).padStart(10, '0')) expect(id, `id ${n}`).toBe(prefix + n.toString(36).padStart(10, '0'));
    }
    expect(ids.next()).toBe(`${prefix}00000012kw`);
  });

  it('differs between instances with other random bytes, and matches req_[0-9a-z]{18}', () => {
    const a = new RequestIds();
    const b = new RequestIds();
    const x = a.next();
    expect(x).toMatch(/^req_[0-9a-z]{18}$/);
    expect(b.next()).toMatch(/^req_[0-9a-z]{18}$/);
    expect(new RequestIds(new Uint8Array(8)).next()).not.toBe(new RequestIds(new Uint8Array(8).fill(1)).next());
  });
});
