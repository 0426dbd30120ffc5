import { describe, expect, it } from 'vitest';
import { RequestIds } from '../src/api/request-ids.js';

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

  it('advance gives the same ids as next, as its own bytes rewritten in place (what a serving thread writes as x-request-id and record_id)', () => {
    const random = Uint8Array.from([1, 2, 3, 4, 5, 6, 7, 8]);
    const strings = new RequestIds(random);
    const bytes = new RequestIds(random);
    const first = bytes.advance();
    expect(Buffer.from(first).toString('latin1')).toBe(strings.next());
    expect(Buffer.from(first).toString('latin1')).toMatch(/^req_12345678[0]{10}$/);
    for (let n = 1; n < 2_000; n++) {
      const b = bytes.advance();
      expect(b).toBe(first);
      const s = strings.next();
      if (Buffer.from(b).toString('latin1') !== s) expect(Buffer.from(b).toString('latin1'), `id ${n}`).toBe(s);
    }
    // next and advance count on one counter: mixed, no id comes twice.
    const mixed = new RequestIds(random);
    const seen = new Set<string>();
    for (let n = 0; n < 100; n++) seen.add(n % 2 === 0 ? mixed.next() : Buffer.from(mixed.advance()).toString('latin1'));
    expect(seen.size).toBe(100);
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
