import { FNV_OFFSET, fnvRun } from '../query/hash.js';
import { parseIp } from './client-address.js';

/** Int32 words of an address key: an IPv6 address, 16 bytes big-endian in four words. */
export const ADDRESS_KEY_WORDS = 4;

/** 0100::/64 (RFC 6666, discard only): no client connects from it, so text that is no address is keyed under it. */
const NOT_AN_ADDRESS = 0x0100_0000;
const SECOND_SEED = 0x9e37_79b9;

/**
 * A client address as the failed-authentication table keys it, written into `out[0..4)`
 * without allocating for the usual dotted quad: IPv4 as its IPv4-mapped IPv6 address
 * (::ffff:a.b.c.d, so a dual-stack socket's form and the plain one count together), IPv6
 * as its 16 bytes, and anything else (an X-Forwarded-For hop that is no address, or '' when
 * the request has no socket) as two FNV-1a hashes under 0100::/64.
 */
export function addressKey(text: string, out: Int32Array): void {
  const v4 = ipv4Word(text);
  if (v4 !== null) {
    out[0] = 0;
    out[1] = 0;
    out[2] = 0xffff;
    out[3] = v4;
    return;
  }
  const ip = text.includes(':') ? parseIp(text) : null;
  if (ip !== null) {
    for (let w = 0; w < ADDRESS_KEY_WORDS; w++) out[w] = (ip[4 * w]! << 24) | (ip[4 * w + 1]! << 16) | (ip[4 * w + 2]! << 8) | ip[4 * w + 3]!;
    return;
  }
  out[0] = NOT_AN_ADDRESS;
  out[1] = 0;
  out[2] = fnvRun(text, FNV_OFFSET);
  out[3] = fnvRun(text, SECOND_SEED);
}

/** `a.b.c.d` (each 0..255 in one to three digits) as an int32, or null. */
function ipv4Word(text: string): number | null {
  let word = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || ++dots > 3) return null;
      word = (word << 8) | part;
      part = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39 && digits < 3) {
      part = part * 10 + (c - 0x30);
      digits++;
      if (part > 255) return null;
    } else return null;
  }
  return dots === 3 && digits > 0 ? (word << 8) | part : null;
}
