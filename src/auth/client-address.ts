/**
 * Who the client is, for the failed-authentication throttle (docs/decisions.md#auth-throttle): the socket's peer,
 * or, only when that peer is a proxy ops declared (`--trusted-proxies`, CIDRs, none by
 * default), the last hop of X-Forwarded-For that is not itself a trusted proxy. A client
 * talking to pitcache directly can write any X-Forwarded-For it likes; it changes nothing,
 * because its peer address is not trusted.
 */

interface Cidr {
  /** 4 bytes (IPv4) or 16 (IPv6) */
  readonly bytes: Uint8Array;
  readonly prefix: number;
}

export class TrustedProxies {
  private constructor(
    private readonly cidrs: readonly Cidr[],
    /** as given, for logs and the serving threads */
    readonly text: string,
  ) {}

  static readonly none = new TrustedProxies([], '');

  /** `--trusted-proxies`: CIDRs (or single addresses) separated by commas; '' = none. Throws with a message naming the bad entry. */
  static parse(text: string): TrustedProxies {
    const cidrs: Cidr[] = [];
    for (const raw of text.split(',')) {
      const entry = raw.trim();
      if (entry === '') continue;
      const slash = entry.indexOf('/');
      const bytes = parseIp(slash < 0 ? entry : entry.slice(0, slash));
      const max = bytes === null ? 0 : bytes.length * 8;
      const prefixText = slash < 0 ? String(max) : entry.slice(slash + 1);
      const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
      if (bytes === null || !(prefix >= 0 && prefix <= max)) {
        throw new Error(`--trusted-proxies: "${entry}" is not an IPv4 or IPv6 address or CIDR (e.g. 10.0.0.0/8, 127.0.0.1, fd00::/8)`);
      }
      cidrs.push({ bytes, prefix });
    }
    return cidrs.length === 0 ? TrustedProxies.none : new TrustedProxies(cidrs, text);
  }

  get empty(): boolean {
    return this.cidrs.length === 0;
  }

  has(address: string): boolean {
    if (this.cidrs.length === 0) return false;
    const ip = parseIp(address);
    if (ip === null) return false;
    for (const c of this.cidrs) if (inCidr(ip, c)) return true;
    return false;
  }

  /**
   * The client's address: the peer when it is not a trusted proxy; else the right-most hop of
   * X-Forwarded-For that is not trusted (each trusted proxy appends the address it received
   * from); the left-most hop when all are trusted; the peer when there is no header.
   */
  clientOf(peer: string, forwardedFor: string): string {
    if (!this.has(peer) || forwardedFor === '') return peer;
    const hops = forwardedFor.split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i]!.trim();
      if (hop !== '' && !this.has(hop)) return hop;
    }
    return hops[0]!.trim() || peer;
  }
}

function inCidr(ip: Uint8Array, c: Cidr): boolean {
  const bytes = mapped(ip, c.bytes.length);
  if (bytes === null) return false;
  let bits = c.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((bytes[i]! & mask) !== (c.bytes[i]! & mask)) return false;
  }
  return true;
}

/** An address in the CIDR's family: IPv4-mapped IPv6 (::ffff:a.b.c.d) compares as IPv4. */
function mapped(ip: Uint8Array, length: number): Uint8Array | null {
  if (ip.length === length) return ip;
  if (ip.length === 16 && length === 4 && ip.subarray(0, 10).every((b) => b === 0) && ip[10] === 0xff && ip[11] === 0xff) return ip.subarray(12);
  return null;
}

/** IPv4 dotted quad or IPv6 (compressed, full, or with an IPv4 tail) to bytes; null when it is neither. */
export function parseIp(text: string): Uint8Array | null {
  if (text.includes(':')) return parseIpv6(text);
  return parseIpv4(text);
}

function parseIpv4(text: string): Uint8Array | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i]!;
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    out[i] = Number(p);
  }
  return out;
}

function parseIpv6(text: string): Uint8Array | null {
  let s = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone);
  let tail: Uint8Array | null = null;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tail = parseIpv4(s.slice(lastColon + 1));
    if (tail === null) return null;
    s = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string): string[] => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const rest = halves.length === 2 ? groups(halves[1]!) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    const g = all[i]!;
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    const v = parseInt(g, 16);
    out[2 * i] = v >> 8;
    out[2 * i + 1] = v & 0xff;
  }
  if (tail !== null) out.set(tail, 12);
  return out;
}
