/**
 * The failed-authentication throttle's parts (issue 14): the per-address table (limit,
 * window, bounded size), `--auth-fail-limit` and `--trusted-proxies` parsing, and which
 * address a request is counted under (the peer, or behind a trusted proxy the last
 * untrusted X-Forwarded-For hop; a forged header from an untrusted peer changes nothing).
 */
import { describe, expect, it } from 'vitest';
import { AuthThrottle, parseAuthFailLimit } from '../src/auth/auth-throttle.js';
import { resolveServeOptions } from '../src/config/serve-options.js';
import { FailureTable, allocateAuthFailures } from '../src/auth/failure-table.js';
import { TrustedProxies, parseIp } from '../src/auth/client-address.js';

describe('AuthThrottle', () => {
  it('refuses an address after `count` failures in the window, until the window ends; other addresses are untouched', () => {
    const t = new AuthThrottle({ count: 3, windowMs: 60_000 });
    expect(t.active).toBe(false);
    for (let i = 0; i < 3; i++) {
      expect(t.retryAfterSeconds('10.0.0.1', 1000 * i)).toBe(0);
      t.failed('10.0.0.1', 1000 * i);
    }
    expect(t.active).toBe(true);
    expect(t.retryAfterSeconds('10.0.0.1', 3000)).toBe(57); // the window started at 0
    expect(t.retryAfterSeconds('10.0.0.1', 59_001)).toBe(1);
    expect(t.retryAfterSeconds('10.0.0.2', 3000)).toBe(0);
    expect(t.retryAfterSeconds('10.0.0.1', 60_000)).toBe(0); // a new window
    t.failed('10.0.0.1', 60_000);
    expect(t.retryAfterSeconds('10.0.0.1', 60_001)).toBe(0); // one failure in the new window
  });

  it('failures in an old window do not count in the next', () => {
    const t = new AuthThrottle({ count: 2, windowMs: 10_000 });
    t.failed('a', 0);
    t.failed('a', 10_000);
    expect(t.retryAfterSeconds('a', 10_001)).toBe(0);
    t.failed('a', 10_002);
    expect(t.retryAfterSeconds('a', 10_003)).toBe(10);
  });

  it('holds at most `capacity` addresses: a flood of addresses evicts the oldest instead of growing', () => {
    const memory = allocateAuthFailures(100);
    const t = new AuthThrottle({ count: 1, windowMs: 60_000 }, memory);
    expect(new FailureTable(memory, 60_000).capacity).toBe(128); // rounded up to a power of two
    for (let i = 0; i < 10_000; i++) t.failed(`10.0.${i >> 8}.${i & 255}`, 0);
    expect(t.tracked).toBe(128);
    expect(t.retryAfterSeconds('10.0.39.15', 1)).toBe(60); // the last one in is held
    expect(t.retryAfterSeconds('10.0.0.0', 1)).toBe(0); // the first was evicted
  });

  it('forgets addresses whose window ended, so requests stop looking theirs up', () => {
    const t = new AuthThrottle({ count: 1, windowMs: 1000 });
    t.failed('a', 0);
    t.failed('b', 0);
    expect(t.active).toBe(true);
    t.retryAfterSeconds('c', 1000);
    expect(t.active).toBe(false);
  });

  it('an address whose window ended is let in even between two prunes, at the exact end', () => {
    const t = new AuthThrottle({ count: 2, windowMs: 10_000 });
    t.retryAfterSeconds('x', 0); // prunes now; the next prune is due at 10 s
    t.failed('a', 1000);
    t.failed('a', 1000);
    expect(t.retryAfterSeconds('a', 10_500)).toBe(1); // prunes (due); a's window ends at 11 s
    expect(t.retryAfterSeconds('a', 10_999)).toBe(1);
    expect(t.retryAfterSeconds('a', 11_000)).toBe(0); // no prune due: the lookup itself lets it in
  });

  it('a new window for an address makes it the newest for eviction', () => {
    const t = new AuthThrottle({ count: 1, windowMs: 1000 }, allocateAuthFailures(2));
    t.failed('a', 0);
    t.failed('b', 500);
    t.failed('a', 1000); // a's window ended: a new one, now newer than b's
    t.failed('c', 1100); // full: the oldest (b) goes
    expect(t.retryAfterSeconds('a', 1200)).toBe(1);
    expect(t.retryAfterSeconds('c', 1200)).toBe(1);
    expect(t.retryAfterSeconds('b', 1200)).toBe(0);
  });

  it('count 0 keeps nothing', () => {
    const t = new AuthThrottle({ count: 0, windowMs: 60_000 });
    t.failed('a', 0);
    expect(t.active).toBe(false);
    expect(t.retryAfterSeconds('a', 1)).toBe(0);
  });
});

describe('--auth-fail-limit', () => {
  it('reads <failures>/<window>, 0 for off; default 30 a minute', () => {
    expect(parseAuthFailLimit('30/60s')).toEqual({ count: 30, windowMs: 60_000 });
    expect(parseAuthFailLimit('100/5m')).toEqual({ count: 100, windowMs: 300_000 });
    expect(parseAuthFailLimit('0').count).toBe(0);
    expect(parseAuthFailLimit('5/1s')).toEqual({ count: 5, windowMs: 1000 });
    expect(() => parseAuthFailLimit('30/soon')).toThrow('--auth-fail-limit: "soon" is not a duration');
    expect(resolveServeOptions().authFailLimit).toEqual({ count: 30, windowMs: 60_000 });
  });

  it.each(['30', '30/', '/60s', '-1/60s', '0/60s', '30/10ms', '30/soon', 'lots', '30/60s\nx'])('refuses %j with the forms it takes', (bad) => {
    expect(() => parseAuthFailLimit(bad)).toThrow(/--auth-fail-limit: [\s\S]* is not <failures>\/<window>|is not a duration/);
  });
});

describe('--trusted-proxies and the client address', () => {
  it('parses IPv4, IPv6 and IPv4-in-IPv6 addresses', () => {
    expect([...parseIp('10.1.2.3')!]).toEqual([10, 1, 2, 3]);
    expect(parseIp('256.1.1.1')).toBeNull();
    expect(parseIp('1.2.3')).toBeNull();
    expect([...parseIp('::1')!]).toEqual([...Array<number>(15).fill(0), 1]);
    expect([...parseIp('fd00::ab:1')!].slice(0, 2)).toEqual([0xfd, 0]);
    expect([...parseIp('0000:0000:0000:0000:0000:ffff:7f00:0001')!].slice(10)).toEqual([0xff, 0xff, 127, 0, 0, 1]);
    expect([...parseIp('::ffff:127.0.0.1')!].slice(12)).toEqual([127, 0, 0, 1]);
    expect(parseIp('1::2::3')).toBeNull();
    expect(parseIp('10.0.0.a1')).toBeNull();
    expect(parseIp('10.0.0.1a')).toBeNull();
    expect(parseIp('[::1]')).toEqual(parseIp('::1'));
    expect(parseIp('fe80::1%eth0')).toEqual(parseIp('fe80::1'));
    expect(parseIp('12345::')).toBeNull();
  });

  it('matches CIDRs of both families; an IPv4-mapped IPv6 peer matches an IPv4 CIDR', () => {
    const t = TrustedProxies.parse('10.0.0.0/8, 127.0.0.1, fd00::/8, 192.168.4.0/22');
    expect(t.has('10.200.3.4')).toBe(true);
    expect(t.has('11.0.0.1')).toBe(false);
    expect(t.has('127.0.0.1')).toBe(true);
    expect(t.has('127.0.0.2')).toBe(false);
    expect(t.has('fd12::1')).toBe(true);
    expect(t.has('fe80::1')).toBe(false);
    expect(t.has('192.168.7.255')).toBe(true);
    expect(t.has('192.168.8.0')).toBe(false);
    expect(t.has('::ffff:10.0.0.1')).toBe(true);
    expect(t.has('not an address')).toBe(false);
    // Only IPv4-mapped IPv6 (::ffff:a.b.c.d) compares as IPv4, not any address ending in 10.x.
    expect(t.has('fe80::a00:1')).toBe(false);
    expect(t.has('::a00:1')).toBe(false);
    expect(t.has('0:0:0:0:0:fffe:a00:1')).toBe(false);
    expect(TrustedProxies.parse('0.0.0.0/0').has('203.0.113.1')).toBe(true);
    expect(TrustedProxies.parse('10.0.0.0/8').empty).toBe(false);
    expect(TrustedProxies.parse('').empty).toBe(true);
  });

  it.each(['10.0.0.0/33', '10.0.0.0/', 'fd00::/129', 'localhost', '10.0.0.0/8/1', '1.2.3.4/x'])('refuses %j', (bad) => {
    expect(() => TrustedProxies.parse(bad)).toThrow(/--trusted-proxies: .* is not an IPv4 or IPv6 address or CIDR/);
  });

  it('the client is the peer, unless the peer is trusted: then the last untrusted X-Forwarded-For hop', () => {
    const t = TrustedProxies.parse('127.0.0.1/32,10.0.0.0/8');
    // An untrusted peer's header is ignored, whatever it claims.
    expect(t.clientOf('203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
    // Behind the proxy: the hop it appended.
    expect(t.clientOf('127.0.0.1', '198.51.100.1')).toBe('198.51.100.1');
    // A client forging the left part of the chain: the proxies' own hops are believed, from the right.
    expect(t.clientOf('127.0.0.1', '1.1.1.1, 198.51.100.1, 10.2.3.4')).toBe('198.51.100.1');
    // Only trusted hops: the left-most; no header: the peer.
    expect(t.clientOf('127.0.0.1', ' 10.0.0.7 , 10.0.0.8')).toBe('10.0.0.7');
    expect(t.clientOf('127.0.0.1', '198.51.100.1, ')).toBe('198.51.100.1');
    expect(t.clientOf('127.0.0.1', '')).toBe('127.0.0.1');
    expect(TrustedProxies.none.clientOf('127.0.0.1', '198.51.100.1')).toBe('127.0.0.1');
  });
});
